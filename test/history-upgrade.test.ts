// Data written before history existed (today's layout: pending, leased, dead) is handled by the
// code that keeps history: written here key by key as the old scripts left it.
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { claimAtLeast, redisNow, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

describe('messages written before history', () => {
  it('pending, leased (lease run out) and dead ones are claimed, acked into history, retried', async () => {
    const q = await redis.queue({ groups: 1 });
    const key = (name: Parameters<typeof keyOf>[2]) => keyOf(q.config.prefix, 0, name);
    const now = await redisNow(redis.plain);
    const header = `${now.toString(36)}|0|3|e1000|`;
    // pending, due now
    await redis.plain.zadd(key('delayed'), now - 10, 'old-pending');
    await redis.plain.hset(key('msg'), 'old-pending', `${header}j{"n":1}`);
    // leased by a consumer that died: its lease ran out
    await redis.plain.zadd(key('active'), now - 5, 'old-leased');
    await redis.plain.hset(key('due'), 'old-leased', `${now - 100}/7.123`);
    await redis.plain.hset(key('msg'), 'old-leased', `${header}sleased body`);
    // dead, with its reason and last error
    await redis.plain.zadd(key('dead'), now - 1000, 'old-dead');
    await redis.plain.hset(key('msg'), 'old-dead', `${header}sdead body`);
    await redis.plain.hset(key('reason'), 'old-dead', 'failed 3 times');
    await redis.plain.hset(key('att'), 'old-dead', '3');

    const got = await claimAtLeast(q, 0, 2);
    expect(got.map((m) => [m.id, m.body, m.attempts]).sort()).toEqual([
      ['old-leased', 'leased body', 2],
      ['old-pending', { n: 1 }, 1],
    ]);
    for (const m of got) m.result = `did ${m.id}`;
    expect(await q.ack(got)).toBe(2);
    expect(await q.get('old-leased')).toMatchObject({
      state: 'done',
      attempts: 2,
      result: 'did old-leased',
      body: 'leased body',
    });
    expect(await q.get('old-pending')).toMatchObject({ state: 'done', result: 'did old-pending' });
    expect(await q.get('old-dead')).toMatchObject({ state: 'dead', deadReason: 'failed 3 times' });
    expect(await q.deadLetters.retry({ group: 0 })).toBe(1);
    const [revived] = await claimAtLeast(q, 0, 1);
    expect(revived?.body).toBe('dead body');
    await q.ack([revived as never]);
    expect((await q.get('old-dead'))?.state).toBe('done');
  });
});
