/**
 * Ids and order (issue 7, items 9–11 and 12's chunking and backoff cap; issue 8, item 1).
 * - Among equal priorities, messages run by due time, then in the order they were added; a
 *   message due earlier runs before a ready-now one added later (order used to be assigned at
 *   promotion, and same-millisecond ties went by id text: "0:z" after "0:10").
 * - No counter wraps: the old ready order wrapped at 2^33 and put the backlog behind new work.
 * - Caller ids cannot take the generated form; a generated id that exists already (its counter
 *   went back: an older AOF, a failover to a lagging replica) is replaced, never overwritten.
 * - addBulk cuts calls by bytes too, and when some calls fail it says which items went in.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { AddBulkError, type Message, Queue, SkyqError } from '../src/index.js';
import { prepareMessage } from '../src/queue/add-options.js';
import { recordsIn, redisNow, untilRedisTime, useQueueRedis } from './helpers/queue.js';
import { startStandalone } from './helpers/redis.js';

const redis = useQueueRedis();

describe('order among equal priorities', () => {
  it('runs a message due earlier before a ready-now one added later', async () => {
    const q = await redis.queue();
    const early = await q.add('due first', { group: 0, delay: 150 });
    const dueAt = (await q.get(early))?.dueAt as number;
    await untilRedisTime(redis.plain, dueAt + 50);
    const later = await q.add('added later, ready now', { group: 0 });
    // A backlog forces the ready set (no direct lease): promote, then take by order.
    const got = await q.claim(0, 1);
    expect(got.map((m) => m.id)).toEqual([early]);
    expect((await q.claim(0, 1)).map((m) => m.id)).toEqual([later]);
  });

  it('runs messages due in the same millisecond in the order they were added', async () => {
    const q = await redis.queue();
    const runAt = (await redisNow(redis.plain)) + 300;
    // Enough to cross id lengths (…z → …10 in base 36 sorted as text used to go first).
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        ...(await q.addBulk(
          Array.from({ length: 300 }, (_, j) => ({
            body: i * 300 + j,
            options: { group: 1, runAt },
          })),
        )),
      );
    }
    await untilRedisTime(redis.plain, runAt + 1);
    const bodies: number[] = [];
    for (;;) {
      const got = await q.claim(1, 700);
      if (got.length === 0) break;
      bodies.push(...got.map((m) => m.body as number));
    }
    expect(bodies).toEqual(Array.from({ length: 1500 }, (_, i) => i));
  });

  it('keeps FIFO across the old 2^33 wrap of the counters, and where ids grow a digit', async () => {
    const q = await redis.queue();
    // 36^9: ids go from 9 base-36 digits to 10 (their letter from i to j) within the backlog.
    await redis.plain.set(keyOf(q.config.prefix, 2, 'seq'), String(36 ** 9 - 1500));
    await redis.plain.set(keyOf(q.config.prefix, 2, 'tok'), String(2 ** 33 - 5));
    // A backlog that straddles 2^33, then more behind it: the old backlog must still go first.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const items = Array.from({ length: 1000 }, (_, j) => ({
        body: i * 1000 + j,
        options: { group: 2 },
      }));
      ids.push(...(await q.addBulk(items)));
    }
    const got: Message[] = [];
    while (got.length < ids.length) got.push(...(await q.claim(2, 7))); // tokens cross 2^33 too
    expect(got.map((m) => m.body)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });
});

describe('ids', () => {
  it('refuses caller ids of the generated form', async () => {
    const q = await redis.queue();
    await expect(q.add('x', { id: '0:a1' })).rejects.toThrow(/reserved for generated ids/);
    await expect(q.add('x', { id: '3:c1kz' })).rejects.toBeInstanceOf(SkyqError);
    expect(await q.add('x', { id: '0:1' })).toBe('0:1'); // not the generated form: a caller id
  });

  it('stores an add sent again while its message waits once (an ioredis resend)', async () => {
    // ioredis sends a command again when its connection died before the answer came. An add
    // that went in then finds its generated ids taken, by its very records: the same add.
    // (The real thing, with kill -9 of Redis, is in test/faults/redis-faults.test.ts.)
    const q = await redis.queue({ groups: 1 });
    const { record } = prepareMessage(q.config, 'hello', { group: 0 });
    const args = ['1', '', '1', '0', '0', '0', '', '0', '0:a1', '', record];
    expect(await q.run('add', 0, args)).toEqual([1]);
    expect(await q.run('add', 0, args)).toEqual([0]);
    const claimed = await q.claim(0, 10);
    expect(claimed.map((m) => [m.id, m.body])).toEqual([['0:a1', 'hello']]);
    // A different record under a taken id is a counter that went back: a fresh id.
    const other = prepareMessage(q.config, 'other', { group: 0 }).record;
    const renamed = (await q.run('add', 0, [
      '1',
      '',
      '1',
      '0',
      '0',
      '0',
      '',
      '0',
      '0:a1',
      '',
      other,
    ])) as unknown[];
    expect(renamed[0]).toBe(1);
    expect(renamed[2]).not.toBe('0:a1');
  });

  it('never overwrites a pending message when the id counter goes back', async () => {
    const q = await redis.queue();
    // The counter ran ahead of Redis's clock (a burst), so going back stays above its floor
    // (lua/id-block.lua) and lands on ids given already.
    const seq = keyOf(q.config.prefix, 3, 'seq');
    const ahead = String(36 ** 10);
    await redis.plain.set(seq, ahead);
    const before = await q.addBulk(
      Array.from({ length: 50 }, (_, i) => ({
        body: `first ${i}`,
        options: { group: 3, delay: 60_000 },
      })),
    );
    // The counter goes back, as after a restart from an older AOF or a failover to a lagging replica.
    await redis.plain.set(seq, ahead);
    const fresh = await redis.queue({ prefix: q.config.prefix });
    const after = await fresh.addBulk(
      Array.from({ length: 50 }, (_, i) => ({
        body: `second ${i}`,
        options: { group: 3, delay: 60_000 },
      })),
    );
    expect(new Set([...before, ...after]).size).toBe(100);
    for (const [i, id] of before.entries()) expect((await q.get(id))?.body).toBe(`first ${i}`);
    for (const [i, id] of after.entries()) expect((await q.get(id))?.body).toBe(`second ${i}`);
    expect((await q.counts())[3]?.delayed).toBe(100);
    // The first producer's block is stale too: its next ids are checked and replaced as well.
    await redis.plain.set(seq, ahead);
    const third = await q.add('third', { group: 3, delay: 60_000 });
    expect([...before, ...after]).not.toContain(third);
    expect((await q.counts())[3]?.delayed).toBe(101);
  });
});

describe('addBulk', () => {
  it('cuts calls by bytes: 64 bodies of 1 MiB go through a 16 MiB query buffer', async () => {
    const server = await startStandalone({ extraArgs: ['--client-query-buffer-limit', '16mb'] });
    const q = new Queue({ redis: server.url, maxBodyBytes: 2 * 1024 * 1024 });
    try {
      const body = 'm'.repeat(1024 * 1024);
      const ids = await q.addBulk(
        Array.from({ length: 64 }, () => ({ body, options: { group: 0 } })),
      );
      expect(ids).toHaveLength(64);
      expect((await q.counts())[0]?.ready).toBe(64);
    } finally {
      await q.close();
      await server.stop();
    }
  });

  it('says which items went in when a group fails, and retry() adds exactly the rest', async () => {
    const q = await redis.queue();
    await redis.plain.set(keyOf(q.config.prefix, 1, 'delayed'), 'a string, not a sorted set');
    const items = Array.from({ length: 20 }, (_, i) => ({
      body: i,
      options: { group: i % 4, delay: 60_000 },
    }));
    const error = await q.addBulk(items).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AddBulkError);
    const partial = error as AddBulkError;
    expect(partial.code).toBe('ERR_SKYQ_PARTIAL_ADD');
    expect(partial.failures.map((f) => f.index)).toEqual([1, 5, 9, 13, 17]);
    expect(partial.failures[0]?.reason).toMatch(/WRONGTYPE key .*:1 holds a string, not a zset/);
    expect(partial.ids.filter((id) => id === null)).toHaveLength(5);
    const added = partial.ids.filter((id): id is string => id !== null);
    for (const id of added) expect((await q.get(id))?.state).toBe('delayed');
    // Nothing of the failed call was written: the key check comes before any write.
    expect(await recordsIn(redis.plain, keyOf(q.config.prefix, 1, 'msg'))).toBe(0);

    await redis.plain.del(keyOf(q.config.prefix, 1, 'delayed'));
    const all = await partial.retry();
    // The items that went in keep their ids; each failed one gets a new id of its own.
    const failed = new Set(partial.failures.map((f) => f.index));
    all.forEach((id, i) => {
      if (failed.has(i)) expect(id, `item ${i}`).toMatch(/^1:/);
      else expect(id, `item ${i}`).toBe(partial.ids[i]);
    });
    expect(new Set(all).size).toBe(20);
    // A second retry (say its reply was lost) adds nothing twice.
    await partial.retry();
    expect((await q.counts()).reduce((sum, c) => sum + c.delayed, 0)).toBe(20);
    for (const [i, id] of all.entries()) expect((await q.get(id))?.body).toBe(i);
  });
});

describe('retry backoff', () => {
  it('is capped: an hour by default, or the backoff max', async () => {
    const q = await redis.queue({ attempts: 40, backoff: { type: 'exponential', delay: 1000 } });
    const capped = await redis.queue({
      attempts: 40,
      backoff: { type: 'exponential', delay: 1000, max: 5000 },
    });
    const id = await q.add('x', { group: 0 });
    const other = await capped.add('y', { group: 0 });
    // 25 failures: 1 s × 2^24 would be 194 days.
    await redis.plain.hset(keyOf(q.config.prefix, 0, 'att'), id, '24');
    await redis.plain.hset(keyOf(capped.config.prefix, 0, 'att'), other, '24');
    const [m] = await q.claim(0);
    const [n] = await capped.claim(0);
    const now = await redisNow(redis.plain);
    expect(await q.fail(m as Message, 'again')).toBe('retry');
    expect(await capped.fail(n as Message, 'again')).toBe('retry');
    const due = (await q.get(id))?.dueAt as number;
    const dueCapped = (await capped.get(other))?.dueAt as number;
    expect(due - now).toBeGreaterThan(3_600_000 - 1000);
    expect(due - now).toBeLessThanOrEqual(3_600_000 + 1000);
    expect(dueCapped - now).toBeLessThanOrEqual(5000 + 1000);
  });
});
