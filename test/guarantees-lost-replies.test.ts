/**
 * README, Guarantees: replies lost after Redis applied a call. A TCP hop between the Queue and
 * a real redis-server (faults/helpers/cut-proxy.ts) lets one call through, drops Redis's
 * answer and closes the connection, as a network cut or a kill at that moment would.
 * - A claim whose reply is lost and which ioredis does not send again (it gave up
 *   reconnecting first) is answered by the consumer's next poll with the same batch: the
 *   batch is not left leased to nobody for a whole lease.
 * - Ack, fail, extend and release whose replies are lost (ioredis sends them again) each end
 *   in the right state, once: nothing lost, no attempt or finished job counted twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type KeyName, keyOf } from '../src/base/keys.js';
import { type Message, Queue } from '../src/index.js';
import { type CutProxy, startCutProxy } from './faults/helpers/cut-proxy.js';
import { claimAtLeast, freshPrefix, redisNow, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const open: { queue: Queue; proxy: CutProxy }[] = [];

/** A Queue that talks to Redis through a cut proxy; `failFast`: ioredis gives up sooner. */
async function queueBehindProxy(failFast = false) {
  const proxy = await startCutProxy(
    Number(new URL((redis.target as { redis: string }).redis).port),
  );
  const queue = new Queue({ redis: proxy.url, prefix: freshPrefix('lr'), groups: 1, failFast });
  await queue.ready();
  open.push({ queue, proxy });
  return { queue, proxy };
}

afterEach(async () => {
  for (const { queue, proxy } of open.splice(0)) {
    await queue.close();
    await proxy.close();
  }
});

/** Where every message of group 0 stands, read from the sets themselves. */
async function where(queue: Queue) {
  const key = (name: KeyName) => keyOf(queue.config.prefix, 0, name);
  const c = redis.plain;
  return {
    waiting: [...(await c.zrange(key('delayed'), 0, -1)), ...(await c.zrange(key('ready'), 0, -1))]
      .map((member) => member.replace(/^[0-9a-f]{11}(?=\d+:)/, '')) // ready members: due + id
      .sort(),
    // Leases only: the placeholder at +inf is no lease (format 7, active-placeholder.test.ts).
    active: (await c.zrangebyscore(key('active'), '-inf', '(+inf')).sort(),
    dead: (await c.zrange(key('dead'), 0, -1)).sort(),
    done: (await c.zrange(key('done'), 0, -1)).sort(),
    attempts: await c.hgetall(key('att')),
  };
}

const idsOf = (messages: readonly Message[]) => messages.map((m) => m.id).sort();

describe('a lost claim reply', () => {
  it('is answered by the next poll with the same batch when ioredis does not send it again', async () => {
    const { queue, proxy } = await queueBehindProxy(true);
    const ids = await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ body: `job ${i}` })));
    // The claim goes through and its reply is lost; the connection stays up, silent, past
    // the fail-fast client's 5 s command timeout, so the claim fails before ioredis could
    // send it again (it does after the close, but nobody reads that reply).
    proxy.cutReplyTo('eval', 6_000);
    await expect(queue.claim(0, 10, 60_000)).rejects.toThrow(/timed out/i);
    expect(proxy.cuts()).toBe(1);
    expect((await where(queue)).active).toEqual([...ids].sort()); // Redis did lease them
    // The consumer polls again: it gets that batch now, not after the 60 s lease.
    const again = await claimAtLeast(queue, 0, 5, 60_000, 10_000);
    expect(idsOf(again)).toEqual([...ids].sort());
    expect(await queue.ack(again)).toBe(5);
    expect(await where(queue)).toMatchObject({ waiting: [], active: [], dead: [] });
  });
});

describe('acks sent again after their reply was lost', () => {
  it('are not stale: a poll carrying acks, resent by ioredis, reports none', async () => {
    const { queue, proxy } = await queueBehindProxy();
    await queue.addBulk(Array.from({ length: 3 }, (_, i) => ({ body: i })));
    const first = await claimAtLeast(queue, 0, 3);
    const more = await queue.addBulk(Array.from({ length: 2 }, (_, i) => ({ body: `more ${i}` })));
    proxy.cutReplyTo('eval');
    // Redis applies the acks and leases the two new ones; the reply is lost, ioredis sends the
    // call again once reconnected, and the acks find their jobs finished: by this very call.
    const polled = await queue.poll(0, { max: 10, ack: first });
    expect(proxy.cuts()).toBe(1);
    expect(polled.stale).toEqual([]);
    expect(idsOf(polled.messages)).toEqual([...more].sort());
    expect((await where(queue)).done).toHaveLength(3);
  });
});

describe('lost replies of ack, fail, extend and release', () => {
  it('ack: each job finished once', async () => {
    const { queue, proxy } = await queueBehindProxy();
    const ids = await queue.addBulk(Array.from({ length: 3 }, (_, i) => ({ body: i })));
    const leased = await claimAtLeast(queue, 0, 3);
    proxy.cutReplyTo('eval');
    await queue.ack(leased);
    expect(proxy.cuts()).toBe(1);
    const state = await where(queue);
    expect(state).toMatchObject({ waiting: [], active: [], dead: [], done: [...ids].sort() });
    for (const id of ids) expect((await queue.get(id))?.state).toBe('done');
    // Finished once: one announcement per job in the stream waiters read.
    const fin = keyOf(queue.config.prefix, 0, 'fin');
    const entries = await redis.plain.xrange(fin, '-', '+');
    // Each entry: its type and meta under two marker fields, then id → name per job.
    const announced = entries.flatMap(([, fields]) =>
      fields.filter((field, i) => i % 2 === 0 && /^0:/.test(field)),
    );
    expect(announced.sort()).toEqual([...ids].sort());
  });

  it('fail: one attempt counted, retried once, then it dead-letters on its last', async () => {
    const { queue, proxy } = await queueBehindProxy();
    const id = await queue.add('x', { attempts: 2, backoff: { type: 'fixed', delay: 1 } });
    const [first] = await claimAtLeast(queue, 0, 1);
    proxy.cutReplyTo('eval');
    await queue.fail(first as Message, new Error('boom'));
    expect(proxy.cuts()).toBe(1);
    expect(await where(queue)).toMatchObject({
      waiting: [id],
      active: [],
      dead: [],
      attempts: { [id]: '1' },
    });
    // Its second (last) attempt fails too: dead with 2 of 2, not earlier.
    const [second] = await claimAtLeast(queue, 0, 1);
    expect(second?.attempts).toBe(2); // this delivery is its second attempt
    expect(await queue.fail(second as Message, new Error('boom'))).toBe('dead');
    expect((await where(queue)).dead).toEqual([id]);
  });

  it('extend: the lease runs to the new end, and the job is still the holder’s', async () => {
    const { queue, proxy } = await queueBehindProxy();
    const id = await queue.add('x');
    const [held] = await claimAtLeast(queue, 0, 1, 5_000);
    const asked = await redisNow(redis.plain);
    proxy.cutReplyTo('eval');
    await queue.extendLease([held as Message], 120_000);
    expect(proxy.cuts()).toBe(1);
    const active = keyOf(queue.config.prefix, 0, 'active');
    const expiry = Number(await redis.plain.zscore(active, id));
    expect(expiry).toBeGreaterThanOrEqual(asked + 120_000);
    expect(expiry).toBeLessThan(asked + 125_000);
    expect(await queue.ack([held as Message])).toBe(1);
  });

  it('release: handed back once, no attempt counted, leased again at once', async () => {
    const { queue, proxy } = await queueBehindProxy();
    const ids = await queue.addBulk(Array.from({ length: 4 }, (_, i) => ({ body: i })));
    const leased = await claimAtLeast(queue, 0, 4, 60_000);
    proxy.cutReplyTo('eval');
    await queue.release(leased);
    expect(proxy.cuts()).toBe(1);
    expect(await where(queue)).toEqual({
      waiting: [...ids].sort(),
      active: [],
      dead: [],
      done: [],
      attempts: {},
    });
    const again = await claimAtLeast(queue, 0, 4);
    expect(idsOf(again)).toEqual([...ids].sort());
    expect(again.map((m) => m.attempts)).toEqual([1, 1, 1, 1]); // still their first attempt
  });
});
