// waitFor is told of a cancel at once, with events off (the default), whoever cancels: another
// Queue, another process (skyq cancel), or a schedule's removal or change of its waiting
// occurrence (issue 24, 2.6). It rejects with ERR_SKYQ_CANCELLED. Real redis-server.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SkyqError } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';
import { runCli } from './helpers/runtime.js';

const redis = useQueueRedis();
/** Far longer than any test here may take: a waitFor that waits it out has missed the cancel. */
const LONG = 20_000;

/** How a waitFor ended, and after how many ms. */
async function outcome(waiting: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await waiting;
    return { error: null, ms: Date.now() - started };
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
}

function expectCancelled(error: unknown, id: string): void {
  expect(error).toBeInstanceOf(SkyqError);
  expect((error as SkyqError).code).toBe('ERR_SKYQ_CANCELLED');
  expect((error as SkyqError).message).toBe(`waitFor ${id}: the job was cancelled`);
}

describe('waitFor and cancel, events off', () => {
  it('rejects at once when another Queue cancels the job', async () => {
    const waiter = await redis.queue();
    const other = await redis.queue({ prefix: waiter.config.prefix });
    expect(other.config.events).toBe(false);
    const id = await waiter.add('to cancel', { delay: LONG });
    const waiting = outcome(waiter.waitFor(id, { timeoutMs: LONG }));
    await sleep(200); // the waiter is reading the stream
    expect(await other.cancel(id)).toBe(true);
    const { error, ms } = await waiting;
    expectCancelled(error, id);
    expect(ms).toBeLessThan(10_000);
  });

  it('rejects at once when another process cancels it (skyq cancel)', async () => {
    const q = await redis.queue();
    const id = await q.add('to cancel', { id: 'order:cli', delay: LONG });
    const waiting = outcome(q.waitFor(id, { timeoutMs: LONG }));
    await sleep(200);
    const url = (redis.target as { redis: string }).redis;
    const cancelled = await runCli(['cancel', id, '--redis', url, '--prefix', q.config.prefix]);
    expect(cancelled.code).toBe(0);
    const { error, ms } = await waiting;
    expectCancelled(error, id);
    expect(ms).toBeLessThan(15_000);
  });

  it("rejects at once when a schedule's removal or change cancels its waiting occurrence", async () => {
    const q = await redis.queue({ groups: 2 });
    const spec = { every: 3_600_000, body: 'hourly', group: 1 };
    const first = await q.schedules.upsert('hourly', spec);
    const occurrence = `schedule:hourly:${first.next}`;
    expect((await q.get(occurrence, { group: 1 }))?.state).toMatch(/^(delayed|ready)$/);
    const changing = outcome(q.waitFor(occurrence, { group: 1, timeoutMs: LONG }));
    await sleep(200);
    // A new body replaces the waiting occurrence (schedule-upsert.lua's cancelWaiting).
    const changed = await q.schedules.upsert('hourly', { ...spec, body: 'hourly, changed' });
    const now = `schedule:hourly:${changed.next}`;
    // An occurrence replaced by one of the same id (the grid kept) is still there: its waiters
    // wait on, and the removal below tells them.
    const kept = now === occurrence;
    if (!kept) {
      const replaced = await changing;
      expectCancelled(replaced.error, occurrence);
      expect(replaced.ms).toBeLessThan(10_000);
    }
    const removing = outcome(q.waitFor(now, { group: 1, timeoutMs: LONG }));
    await sleep(200);
    expect(await q.schedules.remove('hourly')).toBe(true);
    for (const { error, ms } of await Promise.all(kept ? [removing, changing] : [removing])) {
      expectCancelled(error, now);
      expect(ms).toBeLessThan(10_000 + 500);
    }
  });

  it('a job cancelled before the call is not there, as before', async () => {
    const q = await redis.queue();
    const id = await q.add('gone', { delay: LONG });
    await q.cancel(id);
    await expect(q.waitFor(id, { timeoutMs: 500 })).rejects.toThrow(`no message ${id}`);
  });
});
