/**
 * Bounded calls (issue 7, item 4, as a review found it still open): one script call reads a
 * bounded amount whatever the mix of bodies and whatever the caller asks for.
 * - A claim sized its next read by the records read so far: one small record ahead of 120 of
 *   1 MiB made it read and return all 121 (125 MB, 1.1 s of Redis time) in one call. Records
 *   over 1 KiB now have their size in the big hash, so a claim knows before it reads.
 * - A dead-letter page took `limit` entries in one call (100,000: 650 ms). Now at most 500.
 * (The SLOWLOG view of the same, 5,000 messages of 1 MiB, is in test/faults/slowlog.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const MIB = 1024 * 1024;

/** Script calls so far (EVALSHA, and EVAL where a script was not loaded yet), from INFO. */
async function scriptCalls(): Promise<number> {
  const info = await redis.plain.info('commandstats');
  const calls = (name: string) =>
    Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return calls('evalsha') + calls('eval');
}

describe('a claim', () => {
  it('reads at most its 1 MiB budget, plus one record, when small ones come first', async () => {
    const queue = await redis.queue({ groups: 1, keepDone: false });
    await queue.addBulk([{ body: 'small', options: { group: 0 } }]);
    const quarter = 'q'.repeat(MIB / 4);
    await queue.addBulk(
      Array.from({ length: 40 }, () => ({ body: quarter, options: { group: 0 } })),
    );
    await queue.addBulk(
      Array.from({ length: 300 }, () => ({ body: 'tiny', options: { group: 0 } })),
    );
    let total = 0;
    for (let round = 0; total < 341; round++) {
      const claimed = await queue.claim(0, 500);
      const bytes = claimed.reduce((n, m) => n + String(m.body).length, 0);
      expect(bytes).toBeLessThanOrEqual(MIB + MIB / 4);
      expect(claimed.length).toBeGreaterThan(0);
      await queue.ack(claimed);
      total += claimed.length;
      expect(round).toBeLessThan(20);
    }
    expect(total).toBe(341);
    // Done messages leave nothing behind in the big hash but its placeholder.
    expect(await redis.plain.hlen(keyOf(queue.config.prefix, 0, 'big'))).toBeLessThanOrEqual(1);
  });

  it('takes a record over the budget alone, so a batch never shrinks to nothing', async () => {
    const queue = await redis.queue({ groups: 1, maxBodyBytes: 3 * MIB });
    await queue.addBulk([
      { body: 'x'.repeat(2 * MIB), options: { group: 0 } },
      { body: 'after', options: { group: 0 } },
    ]);
    const first = await queue.claim(0, 10);
    expect(first.map((m) => String(m.body).length)).toEqual([2 * MIB]);
    expect((await queue.claim(0, 10)).map((m) => m.body)).toEqual(['after']);
  });
});

describe('a dead-letter page', () => {
  it('of 100,000 small letters is read 500 entries a call', async () => {
    const queue = await redis.queue({ groups: 1 });
    const dead = keyOf(queue.config.prefix, 0, 'dead');
    for (let i = 0; i < 100_000; i += 10_000) {
      const args: (string | number)[] = [];
      for (let j = i; j < i + 10_000; j++) args.push(j, `task:${j}`);
      await redis.plain.zadd(dead, ...args);
    }
    const before = await scriptCalls();
    const letters = await queue.deadLetters.list({ group: 0, limit: 100_000 });
    const calls = (await scriptCalls()) - before;
    expect(letters).toHaveLength(100_000);
    expect(letters[99_999]?.body).toBe('task:99999');
    expect(calls).toBeGreaterThanOrEqual(200);
    expect(calls).toBeLessThanOrEqual(202);
  });
});
