/**
 * README, Guarantees: races the scripts settle, on a real redis-server.
 * - Leases are tokens: after a lease ran out and another consumer claimed the message, an
 *   ack, fail, extend or release by the first consumer's (stale) token changes nothing.
 * - Pause against claim: once pause() has answered, no claim leases anything, however many
 *   consumers were claiming while it ran.
 * - Dead-letter retry against purge: run together over the same letters, every letter ends
 *   either retried (waiting, with its record) or purged (gone), never both, never neither.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Message, Queue } from '../src/index.js';
import { claimAtLeast, recordsIn, untilRedisTime, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

/** Every field of the group's keys a stale call could touch, to compare before and after. */
async function leaseState(q: Queue, id: string) {
  const key = (name: Parameters<typeof keyOf>[2]) => keyOf(q.config.prefix, 0, name);
  return {
    active: await redis.plain.zscore(key('active'), id),
    due: await redis.plain.hget(key('due'), id),
    attempts: await redis.plain.hget(key('att'), id),
    error: await redis.plain.hget(key('err'), id),
    waiting: await redis.plain.zscore(key('delayed'), id),
    dead: await redis.plain.zscore(key('dead'), id),
  };
}

describe('a stale token, after the lease ran out and another consumer claimed', () => {
  it('ack, fail, extend and release by it change nothing; the new holder finishes the job', async () => {
    const first = await redis.queue({ groups: 1 });
    const second = await redis.queue({ groups: 1, prefix: first.config.prefix });
    const id = await first.add('job', { id: 'race-stale' });
    const [old] = await claimAtLeast(first, 0, 1, 200);
    const expiry = Number(await redis.plain.zscore(keyOf(first.config.prefix, 0, 'active'), id));
    await untilRedisTime(redis.plain, expiry + 5);
    // The lease ran out: the next claim recovers it (one attempt counted) and leases it anew.
    const [fresh] = await claimAtLeast(second, 0, 1, 60_000);
    expect(fresh?.id).toBe(id);
    expect(fresh?.token).not.toBe(old?.token);
    const before = await leaseState(first, id);
    expect(before.due).toMatch(new RegExp(`/${(fresh as Message).token}$`));
    const stale = old as Message;
    expect(await first.ack([stale])).toBe(0);
    expect(await first.fail(stale, new Error('late failure'))).toBe('stale');
    expect(await first.fail(stale, new Error('late'), { retry: false })).toBe('stale');
    expect(await first.extendLease([stale], 1)).toBe(0);
    expect(await first.release([stale], { attempted: true })).toBe(0);
    expect(await leaseState(first, id)).toEqual(before);
    expect(await second.ack([fresh as Message])).toBe(1);
    expect((await second.get(id))?.state ?? 'done').toBe('done');
  });
});

describe('pause against claim', () => {
  it('once pause() answered, claims running all along lease nothing more', async () => {
    const producer = await redis.queue({ groups: 1 });
    const prefix = producer.config.prefix;
    const consumers = await Promise.all([0, 1, 2].map(() => redis.queue({ groups: 1, prefix })));
    for (let i = 0; i < 4; i++) {
      await producer.addBulk(Array.from({ length: 1000 }, (_, n) => ({ body: n })));
    }
    let paused = false;
    let running = true;
    let leasedAfterPause = 0;
    let claimsAfterPause = 0;
    let leasedBefore = 0;
    // Each consumer claims a few at a time, as fast as it can, until told to stop.
    const loops = consumers.map(async (q) => {
      while (running) {
        const sentAfterPause = paused;
        const got = await q.claim(0, 3, 60_000);
        if (sentAfterPause) {
          claimsAfterPause++;
          leasedAfterPause += got.length;
        } else leasedBefore += got.length;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await producer.pause(0)).toEqual([0]);
    paused = true;
    // Leases only: the placeholder at +inf is no lease (format 7).
    const leases = () => redis.plain.zcount(keyOf(prefix, 0, 'active'), '-inf', '(+inf');
    const active = await leases();
    // Until every consumer has sent several claims after the pause.
    const deadline = Date.now() + 10_000;
    while (claimsAfterPause < 30 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    running = false;
    await Promise.all(loops);
    expect(claimsAfterPause).toBeGreaterThanOrEqual(30);
    expect(leasedBefore).toBeGreaterThan(0); // the claims did race the pause
    expect(leasedAfterPause).toBe(0);
    expect(await leases()).toBe(active);
    expect(active).toBeLessThanOrEqual(leasedBefore); // every lease made was answered before
  });
});

describe('dead-letter retry against purge', () => {
  it('every letter ends retried or purged, never both, never neither', async () => {
    const q = await redis.queue({ groups: 1 });
    const purger = await redis.queue({ groups: 1, prefix: q.config.prefix });
    const total = 600;
    const ids = await q.addBulk(Array.from({ length: total }, (_, n) => ({ body: n })));
    const leased: Message[] = [];
    while (leased.length < total) leased.push(...(await q.claim(0, 500, 60_000)));
    for (const message of leased) await q.fail(message, new Error('dies'), { retry: false });
    expect((await q.counts())[0]?.dead).toBe(total);
    // Both name every letter, ten a call: retry from the oldest, purge from the newest, at
    // the same time, so they meet and overlap in the middle.
    const tens = (list: string[]) =>
      Array.from({ length: Math.ceil(list.length / 10) }, (_, i) =>
        list.slice(i * 10, i * 10 + 10),
      );
    const walk = async (act: (ids: string[]) => Promise<number>, list: string[]) => {
      let n = 0;
      for (const chunk of tens(list)) n += await act(chunk);
      return n;
    };
    const [retried, purged] = await Promise.all([
      walk((chunk) => q.deadLetters.retry({ ids: chunk }), ids),
      walk((chunk) => purger.deadLetters.purge({ ids: chunk }), [...ids].reverse()),
    ]);
    expect(retried + purged).toBe(total);
    expect(retried).toBeGreaterThan(0); // they did run against each other
    expect(purged).toBeGreaterThan(0);
    const prefix = q.config.prefix;
    const waiting = new Set([
      ...(await redis.plain.zrange(keyOf(prefix, 0, 'delayed'), 0, -1)),
      ...(await redis.plain.zrange(keyOf(prefix, 0, 'ready'), 0, -1)).map((m) => m.slice(11)),
    ]);
    expect(waiting.size).toBe(retried);
    expect(await redis.plain.zcard(keyOf(prefix, 0, 'dead'))).toBe(0);
    // A retried letter has its record; a purged one has nothing left.
    expect(await recordsIn(redis.plain, keyOf(prefix, 0, 'msg'))).toBe(retried);
    for (const id of ids) {
      const info = await q.get(id);
      expect(info === null || (waiting.has(id) && info.state === 'ready'), id).toBe(true);
    }
  });
});
