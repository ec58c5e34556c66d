/**
 * README guarantees that had no test of their own (README, Guarantees): the text order of
 * caller ids due in the same millisecond, a leased-ahead message that cannot be cancelled and
 * says so, a resent add whose message was handled running again under its id, the 5,000
 * ids one claim promotes at most, and the 1 MiB a dead-letter page reads at most. Each on a private redis-server, each with a prefix of its own.
 */
import { describe, expect, it } from 'vitest';
import { groupKeys } from '../src/base/keys.js';
import { claimAtLeast, redisNow, untilRedisTime, useQueueRedis } from './helpers/queue.js';
import { runCli } from './helpers/runtime.js';

const redis = useQueueRedis();

describe('order', () => {
  it('caller ids due in the same millisecond come by their text, whatever the add order', async () => {
    const q = await redis.queue();
    const at = (await redisNow(redis.plain)) + 300;
    const ids = ['order-c', 'order-a', 'order-d', 'order-b'];
    // Separate calls and one bulk call: neither the call nor the position in it decides.
    await q.add('c', { id: 'order-c', runAt: at, group: 0 });
    await q.add('a', { id: 'order-a', runAt: at, group: 0 });
    await q.addBulk([
      { body: 'd', options: { id: 'order-d', runAt: at, group: 0 } },
      { body: 'b', options: { id: 'order-b', runAt: at, group: 0 } },
    ]);
    await untilRedisTime(redis.plain, at);
    const claimed = await claimAtLeast(q, 0, ids.length);
    expect(claimed.map((m) => m.dueAt)).toEqual(Array(ids.length).fill(at));
    expect(claimed.map((m) => m.id)).toEqual([...ids].sort());
  });
});

describe('cancel', () => {
  it('refuses a message leased ahead of its due time, and says so', async () => {
    const q = await redis.queue();
    const id = await q.add('soon', { id: 'leased-ahead', delay: 5000, group: 0 });
    const { messages } = await q.poll(0, { lookaheadMs: 10_000 });
    expect(messages.map((m) => m.id)).toEqual([id]);
    expect(await q.cancel(id)).toBe(false);
    const info = await q.get(id);
    expect(info?.state).toBe('active');
    // The CLI says why nothing happened, in one line, and exits 1.
    const cli = await runCli([
      'cancel',
      id,
      '--redis',
      (redis.target as { redis: string }).redis,
      '--prefix',
      q.config.prefix,
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stderr.trim()).toBe(`skyq: ${id}: not found, running or dead (nothing cancelled)`);
    // Still the consumer's: its ack finishes it.
    expect(await q.ack(messages)).toBe(1);
    expect((await q.get(id))?.state ?? 'done').toBe('done'); // done (kept a while) or gone
  });
});

describe('a resent add', () => {
  it('of a message already handled runs again under the same id', async () => {
    const q = await redis.queue();
    const id = await q.add({ n: 1 }, { id: 'resent-1', group: 0 });
    const [first] = await claimAtLeast(q, 0, 1);
    expect(first?.id).toBe(id);
    expect(await q.ack([first as NonNullable<typeof first>])).toBe(1);
    expect((await q.get(id))?.state ?? 'done').toBe('done');
    // The same add again (a producer's resend after the first was handled): a new delivery.
    expect(await q.add({ n: 1 }, { id: 'resent-1', group: 0 })).toBe(id);
    const [again] = await claimAtLeast(q, 0, 1);
    expect(again?.id).toBe(id);
    expect(again?.body).toEqual({ n: 1 });
    expect(again?.attempts).toBe(1);
  });
});

describe('bounded calls', () => {
  it('one claim promotes at most 5,000 due ids; the next claims promote the rest', async () => {
    const q = await redis.queue();
    const total = 5300;
    // Delayed, then due; priority 1 so that due ids are promoted to the ready set, not leased
    // straight from the delayed set.
    let last = '';
    for (let i = 0; i < total; i += 1000) {
      const n = Math.min(1000, total - i);
      const ids = await q.addBulk(
        Array.from({ length: n }, () => ({
          body: 1,
          options: { group: 0, priority: 1, delay: 3000 },
        })),
      );
      last = ids.at(-1) as string;
    }
    expect((await q.counts())[0]?.delayed).toBe(total); // all waiting, none due at add time
    await untilRedisTime(redis.plain, ((await q.get(last))?.dueAt as number) + 5);
    // Read the sets themselves: counts() reports due members of the delayed set as ready.
    const [delayedKey, readyKey] = groupKeys(q.config.prefix, 0) as [string, string];
    const sizes = async () => [
      await redis.plain.zcard(delayedKey),
      await redis.plain.zcard(readyKey),
    ];
    expect(await q.claim(0, 1)).toHaveLength(1);
    expect(await sizes()).toEqual([total - 5000, 4999]);
    expect(await q.claim(0, 1)).toHaveLength(1);
    expect(await sizes()).toEqual([0, total - 2]);
  });
});

describe('a dead-letter page', () => {
  it('reads at most 1 MiB of records a call, however big the letters; the list still has them all', async () => {
    const q = await redis.queue({ groups: 1 });
    // 40 KiB records stay in the msg hash; 200 KiB ones are spilled to keys of their own
    // (their real size counts all the same).
    const sizes = [...Array(40).fill(40 * 1024), ...Array(10).fill(200 * 1024)] as number[];
    const ids = await q.addBulk(sizes.map((n) => ({ body: 'x'.repeat(n) })));
    const leased = await claimAtLeast(q, 0, ids.length);
    for (const message of leased) await q.fail(message, new Error('dies'), { retry: false });
    const MiB = 1024 * 1024;
    // One script call, as the library makes it: count 500, budget 1 MiB, whole records.
    const pageBytes: number[] = [];
    let rank = 0;
    for (;;) {
      const flat = (await q.run('dead-list', 0, [500, MiB, 0, 'rank', rank])) as unknown[];
      if (flat.length === 0) break;
      let bytes = 0;
      for (let i = 0; i < flat.length; i += 7) bytes += Number(flat[i + 6]);
      pageBytes.push(bytes);
      rank += flat.length / 7;
    }
    expect(rank).toBe(ids.length);
    // A page stops once it passed the budget: at most 1 MiB plus the letter that passed it.
    for (const bytes of pageBytes) expect(bytes).toBeLessThanOrEqual(MiB + 200 * 1024 + 100);
    expect(pageBytes.length).toBeGreaterThanOrEqual(Math.ceil((40 * 40 + 10 * 200) / 1024 / 1.2));
    const listed = await q.deadLetters.list({ group: 0, limit: 100 });
    expect(listed.map((l) => l.id).sort()).toEqual([...ids].sort());
    expect(listed.map((l) => String(l.body).length).sort((a, b) => a - b)).toEqual(
      [...sizes].sort((a, b) => a - b),
    );
  });
});
