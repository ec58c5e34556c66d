import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Message } from '../src/index.js';
import { claimAtLeast, redisNow, untilRedisTime, useQueueRedis, waitFor } from './helpers/queue.js';

const redis = useQueueRedis();

describe('leases', () => {
  it('redelivers a message whose lease expired, then dead-letters it after maxAttempts', async () => {
    const q = await redis.queue();
    const id = await q.add({ job: 'slow' }, { group: 1, attempts: 2 });
    const [first] = await q.claim(1, 10, 150);
    expect(first).toMatchObject({ id, attempts: 1, maxAttempts: 2 });

    // Not acked: after the lease it comes back, one attempt further.
    const [second] = await claimAtLeast(q, 1, 1, 150);
    expect(second).toMatchObject({ id, attempts: 2, body: { job: 'slow' } });

    // Its last lease expires too: dead, with the lease named as the reason.
    const info = await waitFor('the dead letter', async () => {
      expect(await q.claim(1, 10, 150)).toEqual([]);
      const got = await q.get(id);
      return got?.state === 'dead' ? got : undefined;
    });
    expect(info.deadReason).toMatch(/lease/);
    expect(info.lastError).toMatch(/lease expired/);
    const [letter] = await q.deadLetters.list({ group: 1 });
    expect(letter).toMatchObject({ id, attempts: 2, body: { job: 'slow' } });
    expect(letter?.reason).toMatch(/lease expired on the last of 2 attempts/);
    // A late ack from the consumer that lost the lease changes nothing.
    expect(await q.ack([first as Message, second as Message])).toBe(0);
    expect((await q.get(id))?.state).toBe('dead');
  });

  it('extendLease keeps a message from being redelivered', async () => {
    const q = await redis.queue();
    const [id, other] = await q.addBulk([
      { body: 'long job', options: { group: 2 } },
      { body: 'short job', options: { group: 2 } },
    ]);
    const polled = await q.poll(2, { max: 2, leaseMs: 1_000 });
    expect(polled.messages.map((m) => m.id)).toEqual([id, other]);
    const [long, short] = polled.messages as [Message, Message];
    expect(await q.extendLease([long], 60_000)).toBe(1);

    // Wait past the first lease: only the message that was not extended comes back.
    await untilRedisTime(redis.plain, polled.now + 1_100);
    const again = await q.claim(2, 10, 60_000);
    expect(again.map((m) => [m.id, m.attempts])).toEqual([[other, 2]]);
    expect(await q.get(id as string)).toMatchObject({ state: 'active', attempts: 1 });
    // The first lease of `other` is gone: only its second holder may ack or extend it.
    expect(await q.extendLease([short], 60_000)).toBe(0);
    expect(await q.ack([long, short])).toBe(1);
    expect(await q.ack(again)).toBe(1);
    expect(await q.extendLease([long], 1_000)).toBe(0);
    expect((await q.counts())[2]).toMatchObject({ ready: 0, active: 0, dead: 0 });
  });
});

describe('retries and dead letters', () => {
  it('retries with backoff, then dead-letters; retry() revives and purge() deletes', async () => {
    const q = await redis.queue();
    const id = await q.add(
      { n: 1 },
      { group: 3, attempts: 3, backoff: { type: 'exponential', delay: 100 } },
    );
    const seen: Message[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [m] = await claimAtLeast(q, 3, 1);
      seen.push(m as Message);
      const before = await redisNow(redis.plain);
      const outcome = await q.fail(m as Message, new Error(`boom ${attempt}`));
      const after = await redisNow(redis.plain);
      expect(outcome).toBe(attempt < 3 ? 'retry' : 'dead');
      if (attempt < 3) {
        const waiting = await q.get(id);
        expect(waiting).toMatchObject({ lastError: `boom ${attempt}` });
        // Waiting out its backoff: 'delayed', or 'ready' once that has passed (a loaded machine
        // took over 100 ms to ask). Read after get(), which saw an earlier time.
        const readAt = await redisNow(redis.plain);
        if (readAt < (waiting?.dueAt ?? 0)) expect(waiting?.state).toBe('delayed');
        else expect(['delayed', 'ready']).toContain(waiting?.state);
        // Exponential: 100 ms after the first failure, 200 ms after the second.
        const backoff = 100 * 2 ** (attempt - 1);
        expect(waiting?.dueAt).toBeGreaterThanOrEqual(before + backoff);
        expect(waiting?.dueAt).toBeLessThanOrEqual(after + backoff);
      }
    }
    expect(seen.map((m) => m.attempts)).toEqual([1, 2, 3]);
    expect(await q.fail(seen[2] as Message, 'again')).toBe('stale'); // not leased any more

    const letters = await q.deadLetters.list();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      id,
      group: 3,
      reason: 'failed 3 of 3 attempts',
      lastError: 'boom 3',
      attempts: 3,
      body: { n: 1 },
    });
    expect((await q.counts())[3]).toMatchObject({ delayed: 0, ready: 0, dead: 1 });

    expect(await q.deadLetters.retry({ ids: [id, 'unknown'] })).toBe(1);
    expect(await q.get(id)).toMatchObject({
      state: 'ready',
      attempts: 0,
      lastError: null,
      deadReason: null,
    });
    expect(await q.deadLetters.list()).toEqual([]);
    const [back] = await q.claim(3);
    expect(back).toMatchObject({ id, attempts: 1, body: { n: 1 } });
    // A stale holder of an earlier lease cannot fail it now (it used to dead-letter it).
    expect(await q.fail(seen[0] as Message, 'late')).toBe('stale');

    // Dead again at once (attempts left but told so by a 1-attempt message next to it).
    const other = await q.add('one shot', { group: 3, attempts: 1 });
    const [m] = await q.claim(3);
    expect(m?.id).toBe(other);
    expect(await q.fail(m as Message, 'nope')).toBe('dead');
    expect(await q.deadLetters.purge({ group: 3 })).toBe(1);
    expect(await q.get(other)).toBeNull();
    expect(await q.get(id)).toMatchObject({ state: 'active' });
    expect(await q.ack([back as Message])).toBe(1);
    expect(await q.deadLetters.purge()).toBe(0);
  });

  it('pages dead letters newest first (or oldest first) across all groups', async () => {
    const q = await redis.queue({ attempts: 1 });
    const ids = await q.addBulk(
      [0, 1, 2, 0, 1, 2, 0].map((group) => ({ body: group, options: { group } })),
    );
    for (const [i, id] of ids.entries()) {
      const group = [0, 1, 2, 0, 1, 2, 0][i] as number;
      const [m] = await claimAtLeast(q, group, 1);
      expect(m?.id).toBe(id);
      const before = await redisNow(redis.plain);
      expect(await q.fail(m as Message, `e${i}`)).toBe('dead');
      await untilRedisTime(redis.plain, before + 1); // distinct death times: a strict order
    }
    expect((await q.deadLetters.list()).map((l) => l.id)).toEqual(ids);
    expect((await q.deadLetters.list({ limit: 3 })).map((l) => l.id)).toEqual(ids.slice(0, 3));
    // Over all groups, pages go by cursor: each starts after the letter the one before ended with.
    const first = await q.deadLetters.page({ limit: 3, order: 'oldest' });
    const second = await q.deadLetters.page({ limit: 3, after: first.next as string });
    const third = await q.deadLetters.page({ limit: 3, after: second.next as string });
    expect([first, second, third].map((p) => p.letters.map((l) => l.id))).toEqual([
      ids.slice(0, 3),
      ids.slice(3, 6),
      ids.slice(6),
    ]);
    expect(third.next).toBeNull();
    // Newest first by default.
    const latest = await q.deadLetters.page({ limit: 4 });
    const rest = await q.deadLetters.page({ limit: 4, after: latest.next as string });
    expect([...latest.letters, ...rest.letters].map((l) => l.id)).toEqual([...ids].reverse());
    // An offset there would cost what it counts: refused, naming the way that does not.
    await expect(q.deadLetters.list({ offset: 2, limit: 3 })).rejects.toThrow(
      /offset: over all groups .* deadLetters.page\(\{ after: next \}\)/,
    );
    await expect(q.deadLetters.page({ after: 'nonsense' })).rejects.toThrow(
      /after: is not a cursor from a dead-letter page/,
    );
    expect((await q.deadLetters.list({ group: 0, offset: 1 })).map((l) => l.id)).toEqual([
      ids[3],
      ids[6],
    ]);
  });

  it('retry() revives every dead letter; an unreadable one dies again at its next lease', async () => {
    const q = await redis.queue({ attempts: 1 });
    const n = 1_050; // more than one batch of the dead-letter scripts
    await q.addBulk(Array.from({ length: n }, (_, i) => ({ body: i, options: { group: 5 } })));
    const claimed = await q.claim(5, n);
    expect(claimed).toHaveLength(n);
    const outcomes = await Promise.all(claimed.map((m) => q.fail(m, 'down')));
    expect(new Set(outcomes)).toEqual(new Set(['dead']));
    const [oldest] = await redis.plain.zrange(keyOf(q.config.prefix, 5, 'dead'), 0, 0);
    await redis.plain.hset(keyOf(q.config.prefix, 5, 'msg'), oldest as string, 'unreadable');

    expect(await q.deadLetters.retry()).toBe(n);
    expect((await q.counts())[5]).toMatchObject({ ready: n, dead: 0 });
    const again = await q.claim(5, n);
    expect(again).toHaveLength(n - 1);
    expect(again.map((m) => m.id)).not.toContain(oldest);
    const [letter] = await q.deadLetters.list();
    expect(letter).toMatchObject({ id: oldest, body: 'unreadable' });
    expect(letter?.reason).toMatch(/malformed record/);
    expect(await q.ack(again)).toBe(n - 1);
    expect(await q.deadLetters.purge()).toBe(1);
  });

  it('fixed backoff waits the same time before each retry', async () => {
    const q = await redis.queue();
    const id = await q.add('x', {
      group: 0,
      attempts: 3,
      backoff: { type: 'fixed', delay: 5_000 },
    });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const claimed = await q.claim(0);
      expect(claimed.map((m) => m.attempts)).toEqual([attempt]);
      const before = await redisNow(redis.plain);
      expect(await q.fail(claimed[0] as Message, 'later')).toBe('retry');
      const after = await redisNow(redis.plain);
      const due = (await q.get(id))?.dueAt as number;
      expect(due).toBeGreaterThanOrEqual(before + 5_000);
      expect(due).toBeLessThanOrEqual(after + 5_000);
      expect(await q.reschedule(id, { delay: 0 })).toBe(true); // no need to wait it out
    }
  });

  it('dead-letters records it cannot read, and the claim returns the others', async () => {
    const q = await redis.queue();
    const msgKey = keyOf(q.config.prefix, 4, 'msg');
    const ids = await q.addBulk(
      ['good 1', 'garbage', 'good 2', 'broken json', 'good 3'].map((body) => ({
        body,
        options: { group: 4, delay: 100 },
      })),
    );
    const [good1, garbage, good2, broken, good3] = ids as string[];
    await redis.plain.hset(msgKey, garbage as string, 'this is not a record');
    await redis.plain.hset(msgKey, broken as string, '|0|3|e1000|j{"not": json');

    const got = await claimAtLeast(q, 4, 3);
    expect(got.map((m) => m.body)).toEqual(['good 1', 'good 2', 'good 3']);
    expect(got.map((m) => m.id)).toEqual([good1, good2, good3]);

    const letters = await q.deadLetters.list({ group: 4 });
    expect(letters.map((l) => l.id).sort()).toEqual([garbage, broken].sort());
    const byId = new Map(letters.map((l) => [l.id, l]));
    expect(byId.get(garbage as string)?.reason).toMatch(/malformed record/);
    expect(byId.get(garbage as string)?.body).toBe('this is not a record');
    expect(byId.get(broken as string)?.reason).toMatch(/malformed record.*not valid JSON/);
    expect((await q.get(broken as string))?.state).toBe('dead');
    // Retrying a record that cannot be read sends it back, and its next lease dead-letters it again.
    expect(await q.deadLetters.retry({ ids: [garbage as string] })).toBe(1);
    expect(await q.claim(4)).toEqual([]);
    expect((await q.counts())[4]).toMatchObject({ ready: 0, active: 3, dead: 2 });
  });
});
