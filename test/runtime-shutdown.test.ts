import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import {
  fixture,
  idsByState,
  recorded,
  tempDir,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('graceful shutdown', () => {
  it('hands in-flight messages back, and a new launcher finishes them: all done, none lost', async () => {
    const where = { redis: redis.server.url, prefix: 'grace', groups: 2 };
    const options = {
      ...where,
      logDir: tempDir(),
      handler: fixture('record.mjs'),
      concurrency: 4,
      publishStats: false,
    };
    const queue = new Queue(where);
    const total = 60;
    // Handlers of 300 ms, 8 at once: at any moment some started less than the grace ago.
    const ids = await queue.addBulk(
      Array.from({ length: total }, () => ({ body: { list: 'grace', ms: 300 } })),
    );
    const first = await startActors({ ...options, graceMs: 50 });
    try {
      await waitFor('some done while others run', async () => {
        const leased = (await queue.counts()).reduce((sum, c) => sum + c.active, 0);
        return (await redis.client.llen('grace')) >= 8 && leased > 0 ? true : undefined;
      });
    } finally {
      await first.stop();
    }

    const after = await idsByState(redis.client, queue);
    const doneFirst = new Set(await recorded(redis.client, 'grace'));
    const queued = new Set([...after.ready, ...after.delayed]);
    expect(after.active).toEqual([]);
    expect(after.dead).toEqual([]);
    expect(queued.size).toBeGreaterThan(0);
    // Every message is done or back in the queue.
    expect(ids.filter((id) => !doneFirst.has(id) && !queued.has(id))).toEqual([]);
    // Only handed-back messages may run twice (a handler may finish after its lease went back).
    const both = [...doneFirst].filter((id) => queued.has(id));
    expect(both.length).toBeLessThanOrEqual(8);

    const second = await startActors({ ...options, graceMs: 5000 });
    try {
      await waitFor('the rest done', async () => {
        const counts = await queue.counts();
        const left = counts.reduce((sum, c) => sum + c.delayed + c.ready + c.active, 0);
        return left === 0 ? true : undefined;
      });
    } finally {
      await second.stop();
      await queue.close();
    }
    const done = await recorded(redis.client, 'grace');
    const unique = new Set(done);
    expect(unique.size).toBe(total);
    expect([...unique].sort()).toEqual([...ids].sort());
    const twice = done.filter((id, i) => done.indexOf(id) !== i);
    expect(twice.every((id) => both.includes(id))).toBe(true);
  });

  it('waits for running handlers within the grace, handing nothing back', async () => {
    const where = { redis: redis.server.url, prefix: 'patient', groups: 1 };
    const options = {
      ...where,
      logDir: tempDir(),
      handler: fixture('record.mjs'),
      publishStats: false,
    };
    const queue = new Queue(where);
    const ids = await queue.addBulk(
      Array.from({ length: 5 }, () => ({ body: { list: 'patient', ms: 400 } })),
    );
    const launcher = await startActors({ ...options, graceMs: 10_000 });
    try {
      await waitFor('handlers running', async () =>
        ((await queue.counts())[0]?.active ?? 0) > 0 ? true : undefined,
      );
    } finally {
      await launcher.stop();
    }
    expect((await recorded(redis.client, 'patient')).sort()).toEqual([...ids].sort());
    expect(await queue.counts()).toEqual([
      { group: 0, delayed: 0, ready: 0, active: 0, dead: 0, paused: false },
    ]);
    await queue.close();
  });

  it('hands messages leased ahead of their due time back to the delayed set, not the ready set', async () => {
    const where = { redis: redis.server.url, prefix: 'ahead', groups: 1 };
    const queue = new Queue(where);
    // The hand-back itself, without timing: leased 10 s ahead, released, delayed again.
    const later = await queue.add('later', { delay: 10_000 });
    const dueLater = (await queue.get(later))?.dueAt;
    const { messages } = await queue.poll(0, { lookaheadMs: 20_000 });
    expect(messages.map((m) => m.id)).toEqual([later]);
    expect(await queue.release(messages)).toBe(1);
    expect(await queue.get(later)).toMatchObject({
      state: 'delayed',
      dueAt: dueLater,
      attempts: 0,
    });
    expect(await queue.claim(0, 10)).toEqual([]);
    expect(await queue.cancel(later)).toBe(true);

    // Through the runtime: an actor resumed with them due within its 1 s lookahead (the
    // runtime's most) leases them ahead at once; stop(0) hands them back. (An idle actor woken
    // by the add would sleep on until just before the due time, to take later adds in the same
    // claim, which leaves the stop no time.) The case needs the stop to begin before the due
    // time: a machine too starved for that fails the test rather than skipping the runtime half.
    const launcher = await startActors({
      ...where,
      logDir: tempDir(),
      lookaheadMs: 1000,
      paused: true,
    });
    let stoppedAt = 0;
    const ids = await queue.addBulk(
      Array.from({ length: 5 }, () => ({ body: 'x', options: { delay: 900 } })),
    );
    const dueAt = (await queue.get(ids[0] as string))?.dueAt as number;
    await launcher.resume();
    try {
      await waitFor('the messages leased ahead', async () =>
        ((await queue.counts())[0]?.active ?? 0) === 5 ? true : undefined,
      );
    } finally {
      stoppedAt = Date.now(); // when the stop began: a slow thread exit after it is no matter
      await launcher.stop(0);
    }
    const counts = (await queue.counts())[0];
    expect(counts?.active).toBe(0);
    expect(stoppedAt, 'the stop began before the due time').toBeLessThan(dueAt - 50);
    // Read from the sets, not from counts() or a claim: counts() calls a delayed message ready
    // once its due time has passed, and on a slow machine the stop (threads exiting) outlasted
    // the 900 ms once. Back in the delayed set at their own due time, none can be claimed
    // before it (the first half checks that claim without timing).
    const delayedKey = keyOf('ahead', 0, 'delayed');
    const scores = await Promise.all(ids.map((id) => redis.client.zscore(delayedKey, id)));
    expect(scores.map(Number)).toEqual(ids.map(() => dueAt));
    expect(await redis.client.zcard(keyOf('ahead', 0, 'ready'))).toBe(0);
    expect(counts).toMatchObject({ active: 0, dead: 0, paused: false });
    expect((counts?.delayed ?? 0) + (counts?.ready ?? 0)).toBe(5);
    await queue.close();
  });
});
