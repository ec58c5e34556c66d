// Dedupe windows: add(body, { id, dedupeMs }) changes nothing for that long after the first
// add, pending, done, trimmed from the history or dead; the window's end in get(); expiry,
// trimming bounded per call, no TTL on any key, bad input, and produce --json's dedupe.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Message } from '../src/index.js';
import { claimAtLeast, redisNow, useQueueRedis } from './helpers/queue.js';
import { runCli } from './helpers/runtime.js';

const redis = useQueueRedis();

async function finish(q: Awaited<ReturnType<typeof redis.queue>>, count = 1): Promise<void> {
  await q.ack(await claimAtLeast(q, 0, count));
}

describe('dedupe windows', () => {
  it('holds after the job is done: the second add changes nothing and returns the id', async () => {
    const q = await redis.queue({ groups: 1 });
    const now = await redisNow(redis.plain);
    expect(await q.add('first', { id: 'pay:1', dedupeMs: 60_000 })).toBe('pay:1');
    await finish(q);
    expect(await q.add('second', { id: 'pay:1', dedupeMs: 60_000 })).toBe('pay:1');
    const info = await q.get('pay:1');
    expect(info).toMatchObject({ state: 'done', body: 'first' });
    expect(info?.dedupeUntil).toBeGreaterThanOrEqual(now + 60_000);
    expect(info?.dedupeUntil).toBeLessThan(now + 70_000);
    expect((await q.counts())[0]).toMatchObject({ delayed: 0, ready: 0, active: 0 });
    // Without a window, a done id is added again as before.
    await q.add('plain', { id: 'pay:2' });
    await finish(q);
    await q.add('plain again', { id: 'pay:2' });
    expect((await q.get('pay:2'))?.state).toBe('ready');
  });

  it('outlives the history: a trimmed job does not reopen its window', async () => {
    const q = await redis.queue({ groups: 1, keepDone: { count: 1 } });
    await q.add('first', { id: 'order:1', dedupeMs: '10m' });
    await finish(q);
    for (let i = 0; i < 3; i++) {
      await q.add(i);
      await finish(q);
    }
    expect(await q.get('order:1')).toBeNull(); // trimmed from the history
    expect(await q.add('again', { id: 'order:1' })).toBe('order:1');
    expect(await q.get('order:1')).toBeNull(); // and still nothing added
    expect(await q.dedupeUntil('order:1')).toBeGreaterThan(Date.now() + 9 * 60_000 - 60_000);
    expect((await q.counts())[0]).toMatchObject({ delayed: 0, ready: 0, active: 0 });
  });

  it('holds for a dead letter too, and ends: then the id is added anew', async () => {
    const q = await redis.queue({ groups: 1, attempts: 1 });
    await q.add('doomed', { id: 'job:d', dedupeMs: 400 });
    const [m] = await claimAtLeast(q, 0, 1);
    await q.fail(m as Message, new Error('no'));
    await q.add('revived?', { id: 'job:d' });
    expect((await q.get('job:d'))?.state).toBe('dead');
    await sleep(500);
    expect(await q.dedupeUntil('job:d')).toBeNull();
    await q.add('revived', { id: 'job:d' });
    expect(await q.get('job:d')).toMatchObject({ state: 'ready', body: 'revived' });
  });

  it('trims ended windows a bounded number per add, and no key has a TTL', async () => {
    const q = await redis.queue({ groups: 1 });
    const windows = keyOf(q.config.prefix, 0, 'dedupe');
    await q.addBulk(
      Array.from({ length: 50 }, (_, i) => ({ body: i, options: { id: `w:${i}`, dedupeMs: 100 } })),
    );
    expect(await redis.plain.zcard(windows)).toBe(50);
    expect(await redis.plain.pttl(windows)).toBe(-1);
    await sleep(200);
    await q.add('one more'); // a batch of 1: at most 1 + 10 ended windows go
    expect(await redis.plain.zcard(windows)).toBe(39);
    for (let i = 0; i < 5; i++) await q.add(i);
    expect(await redis.plain.zcard(windows)).toBe(0);
    const keys = await redis.plain.keys(`*${q.config.prefix}*`);
    for (const key of keys) expect([key, await redis.plain.pttl(key)]).toEqual([key, -1]);
  });

  it('refuses bad input in one line, adding nothing', async () => {
    const q = await redis.queue({ groups: 1 });
    await expect(q.add('x', { dedupeMs: 1000 })).rejects.toThrow(
      'dedupeMs: needs an id: a window is kept per caller id',
    );
    await expect(q.add('x', { id: 'a:1', dedupeMs: -5 })).rejects.toThrow(/dedupeMs: must be ≥ 0/);
    await expect(q.add('x', { id: 'a:1', dedupeMs: 'soon' })).rejects.toThrow(
      /dedupeMs: expected a duration with a unit/,
    );
    await expect(
      q.addBulk([
        { body: 1, options: { id: 'a:2', dedupeMs: '1m' } },
        { body: 2, options: { id: 'a:3', dedupeMs: {} as unknown as number } },
      ]),
    ).rejects.toThrow(/items\[1\]\.options\.dedupeMs: must be a number of ms or a duration/);
    expect(await q.get('a:1')).toBeNull();
    expect(await q.get('a:2')).toBeNull();
  });

  it('produce --json takes dedupe; skyq get tells when the window ends', async () => {
    const q = await redis.queue({ groups: 1 });
    const url = (redis.target as { redis: string }).redis;
    const flags = ['--redis', url, '--prefix', q.config.prefix, '--groups', '1'];
    const line = JSON.stringify({ body: 'hi', id: 'cli:1', dedupe: '10m' });
    const out = await runCli(['produce', '--json', ...flags], `${line}\n${line}\n`);
    expect(out.code).toBe(0);
    const [counts] = await q.counts();
    expect((counts?.ready ?? 0) + (counts?.delayed ?? 0)).toBe(1); // the second line added nothing
    await finish(q);
    const get = await runCli(['get', 'cli:1', ...flags]);
    expect(get.stdout).toMatch(/dedupe until\s+\S/);
    await redis.plain.del(keyOf(q.config.prefix, 0, 'done'));
    const gone = await runCli(['get', 'cli:1', ...flags]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/its dedupe window is open until 20\d\d-.*changes nothing/);
  });
});
