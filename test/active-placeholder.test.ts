// Format 7: the active set keeps a placeholder member at +inf, so Redis keeps it a skiplist
// instead of a listpack that each claim's ZADD scans score by score (lib.lua KEEP_MEMBER). The
// placeholder must never show: not in counts, pages, lease times, nor as a lease of its own.
import { describe, expect, it } from 'vitest';
import { KEEP_FIELD, KEEP_MEMBER, keyOf } from '../src/base/keys.js';
import { FORMAT_VERSION, formatKey } from '../src/queue/format.js';
import { claimAtLeast, redisNow, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

describe('the active set placeholder', () => {
  it('keeps a small active set a skiplist, and never counts, lists or times it', async () => {
    const q = await redis.queue({ groups: 1 });
    const active = keyOf(q.config.prefix, 0, 'active');
    for (const body of ['a', 'b', 'c']) await q.add(body, { group: 0 });
    const leased = await claimAtLeast(q, 0, 3);
    // Three leases: a listpack before format 7.
    expect(await redis.plain.object('ENCODING', active)).toBe('skiplist');
    expect((await q.counts())[0]).toMatchObject({ active: 3 });
    const page = await q.list('active', { group: 0 });
    expect(page.items.map((item) => item.id).sort()).toEqual(leased.map((m) => m.id).sort());

    expect(await q.ack(leased)).toBe(3);
    // Emptied by the acks, it stays (and stays a skiplist) with nothing in it that counts.
    expect(await redis.plain.object('ENCODING', active)).toBe('skiplist');
    expect(await redis.plain.zcard(active)).toBe(1);
    expect((await q.counts())[0]).toMatchObject({ active: 0 });
    expect((await q.list('active', { group: 0 })).items).toEqual([]);
    // Nothing pending and no lease: the placeholder's +inf is no lease expiry to wait for.
    const idle = await q.poll(0, { max: 10 });
    expect(idle.messages).toEqual([]);
    expect(idle.nextDueAt).toBe(-1);
  });

  it('a lease held when format 6 wrote it (no placeholder) is counted, listed and acked', async () => {
    const q = await redis.queue({ groups: 1 });
    const key = (name: Parameters<typeof keyOf>[2]) => keyOf(q.config.prefix, 0, name);
    // As format 6 left it, key by key: a lease in force, no placeholder, format key 6.
    const now = await redisNow(redis.plain);
    await redis.plain.set(formatKey(q.config.prefix), '6');
    await redis.plain.zadd(key('active'), now + 60_000, 'old-leased');
    await redis.plain.hset(key('due'), 'old-leased', `${now - 100}/7.123`);
    await redis.plain.hset(key('msg'), 'old-leased', `${now.toString(36)}|0|3|e1000|sleased body`);
    const upgraded = await redis.queue({ groups: 1, prefix: q.config.prefix });
    expect(await redis.plain.get(formatKey(q.config.prefix))).toBe(String(FORMAT_VERSION));
    expect((await upgraded.counts())[0]).toMatchObject({ active: 1 });
    const page = await upgraded.list('active', { group: 0 });
    expect(page.items.map((item) => item.id)).toEqual(['old-leased']);
    // The next claim adds the placeholder; the old lease is still acked by its token.
    await upgraded.add('new', { group: 0 });
    const [fresh] = await claimAtLeast(upgraded, 0, 1);
    expect(await redis.plain.zscore(key('active'), KEEP_MEMBER)).toBe('inf');
    expect((await upgraded.counts())[0]).toMatchObject({ active: 2 });
    const old = { ...(fresh as NonNullable<typeof fresh>), id: 'old-leased', token: '7.123' };
    expect(await upgraded.ack([old, fresh as NonNullable<typeof fresh>])).toBe(2);
    expect((await upgraded.counts())[0]).toMatchObject({ active: 0 });
  });

  it('a raw member named like the placeholder is a dead letter, never a lease', async () => {
    const q = await redis.queue({ groups: 1 });
    await redis.plain.zadd(keyOf(q.config.prefix, 0, 'delayed'), 0, KEEP_MEMBER);
    expect(await q.claim(0, 10)).toEqual([]);
    const [letter] = await q.deadLetters.list({ group: 0 });
    expect(letter?.idBytes).toEqual(KEEP_MEMBER);
    expect(letter?.reason).toMatch(/placeholder member/);
    expect((await q.counts())[0]).toMatchObject({ active: 0, dead: 1 });
  });

  it('a raw member of each placeholder name, due with priorities in use, is dead-lettered; the rest are leased', async () => {
    // Review of format 7: the claim stopped at the first placeholder name (KEEP_FIELD sorts
    // first, so KEEP_MEMBER was leased over the placeholder), and with priorities in use a
    // priority read as text made ZADD fail on the pri hash's own placeholder after the due
    // ids had left the delayed set: every one of them lost.
    const q = await redis.queue({ groups: 1 });
    const now = await redisNow(redis.plain);
    const urgent = await q.add('urgent', { group: 0, priority: 5, runAt: now - 30 });
    const plain = await q.add('plain', { group: 0, runAt: now - 20 });
    const delayed = keyOf(q.config.prefix, 0, 'delayed');
    await redis.plain.zadd(delayed, now - 10, KEEP_FIELD, now - 10, KEEP_MEMBER);
    const leased = await claimAtLeast(q, 0, 2);
    expect(leased.map((m) => m.id)).toEqual([plain, urgent]); // priority 0 first
    const letters = await q.deadLetters.list({ group: 0 });
    expect(letters.map((l) => l.idBytes as Buffer).sort(Buffer.compare)).toEqual([
      KEEP_FIELD,
      KEEP_MEMBER,
    ]);
    expect(await redis.plain.zscore(keyOf(q.config.prefix, 0, 'active'), KEEP_MEMBER)).toBe('inf');
    expect(await redis.plain.hexists(keyOf(q.config.prefix, 0, 'due'), KEEP_MEMBER)).toBe(0);
    expect((await q.counts())[0]).toMatchObject({ active: 2, dead: 2, ready: 0, delayed: 0 });
    expect(await q.ack(leased)).toBe(2);
    // Retried with a priority message pending: back to the ready set, not lost half-way.
    const later = await q.add('later', { group: 0, priority: 1 });
    expect(await q.deadLetters.retry({ group: 0 })).toBe(2);
    const again = await claimAtLeast(q, 0, 1);
    expect(again.map((m) => m.id)).toContain(later);
    expect((await q.counts())[0]).toMatchObject({ active: 1, dead: 2 });
  });

  it("the watcher's read of a group with only the placeholder left finds nothing to wake for", async () => {
    const q = await redis.queue({ groups: 1 });
    await q.add('x', { group: 0 });
    expect(await q.ack(await claimAtLeast(q, 0, 1))).toBe(1);
    const delayed = keyOf(q.config.prefix, 0, 'delayed');
    const reply = (await q.runMulti('watch-many', delayed, [
      String(q.config.unitMs),
      q.config.prefix,
      '0',
    ])) as number[];
    expect(reply[0]).toBe(-1); // nothing due, no lease: not the placeholder's +inf
  });
});
