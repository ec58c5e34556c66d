/**
 * A raw member another program `ZADD`s again while the same id runs (leased: in the active set,
 * its due-hash entry "<due>/<token>") must not be leased beside it. Before, the next claim leased
 * it again: two handlers ran the id at once, the second lease's token replaced the first's, so
 * the first run's ack was refused as stale; on the priority path promotion alone overwrote the
 * lease. Now it waits until the running one has ended (acked, failed, its lease expired) and runs
 * exactly once more, and no claim is told to come back at once meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Message, Queue, QueueOptions } from '../src/index.js';
import { startActors } from '../src/start.js';
import { claimAtLeast, closedAfterFile, openQueue, redisNow } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const keep = closedAfterFile();

const open = async (options: QueueOptions = {}) =>
  keep(await openQueue({ redis: redis.server.url }, { groups: 1, ...options }));

/** A group with some priority pending, so due members go through the ready set (promotion). */
async function withPriorities(q: Queue) {
  await q.add('far', { group: 0, delay: 600_000, priority: 5, id: 'far' });
}

async function zaddNow(q: Queue, member: string): Promise<number> {
  const score = await redisNow(redis.client);
  await redis.client.zadd(keyOf(q.config.prefix, 0, 'delayed'), score, member);
  return score;
}

/** Claims, leased `member`, and re-adds it with a ZADD; the claim after must lease nothing. */
async function leasedThenReadded(q: Queue, member: string, leaseMs = 60_000) {
  await zaddNow(q, member);
  const first = await claimAtLeast(q, 0, 1, leaseMs);
  expect(first.map((m) => m.id)).toEqual([member]);
  await zaddNow(q, member);
  const during = await q.poll(0, { leaseMs });
  expect(during.messages.map((m) => m.id)).toEqual([]);
  // Not "come back now": the member waits, so a consumer must not poll again at once.
  expect(during.nextDueAt).toBeGreaterThan(during.now);
  return first[0] as Message;
}

/** The ids a group still holds in any state other than done. */
async function pendingIds(q: Queue): Promise<number> {
  const [c] = await q.counts();
  return (c?.delayed ?? 0) + (c?.ready ?? 0) + (c?.active ?? 0) + (c?.dead ?? 0);
}

const paths = [
  ['direct (all priority 0)', async (_q: Queue) => undefined],
  ['priority (promotion to the ready set)', withPriorities],
] as const;

describe.each(paths)('a raw member re-added while it runs, %s path', (_path, setUp) => {
  const left = setUp === withPriorities ? 1 : 0; // 'far' waits on the priority path
  it('waits for the ack, then runs once more', async () => {
    const q = await open();
    await setUp(q);
    const first = await leasedThenReadded(q, 'job:acked');
    expect(await q.ack([first])).toBe(1); // the first run's lease is still its own
    const [again, ...more] = await claimAtLeast(q, 0, 1);
    expect(more).toEqual([]);
    expect(again).toMatchObject({ id: 'job:acked', body: 'job:acked', attempts: 1 });
    expect(await q.ack([again as Message])).toBe(1);
    expect((await q.poll(0)).messages).toEqual([]);
    expect(await pendingIds(q)).toBe(left); // the re-added member went with the retry
    expect(await pendingIds(q)).toBe(left); // nothing more waits
  });

  it('after a failure, the retry is the one more run', async () => {
    const q = await open({ backoff: { type: 'fixed', delay: 0 } });
    await setUp(q);
    const first = await leasedThenReadded(q, 'job:failed');
    expect(await q.fail(first, 'boom')).toBe('retry');
    const [again, ...more] = await claimAtLeast(q, 0, 1);
    expect(more).toEqual([]);
    expect(again).toMatchObject({ id: 'job:failed', attempts: 2 });
    expect(await q.ack([again as Message])).toBe(1);
    expect((await q.poll(0)).messages).toEqual([]);
    expect(await pendingIds(q)).toBe(left); // the re-added member went with the retry
  });

  it("after it failed for good, it runs once more, in the dead letter's place", async () => {
    const q = await open({ attempts: 1 });
    await setUp(q);
    const first = await leasedThenReadded(q, 'job:dead');
    expect(await q.fail(first, 'boom')).toBe('dead');
    // Before, the claim found the dead letter's attempts used up and killed it again.
    const [again, ...more] = await claimAtLeast(q, 0, 1);
    expect(more).toEqual([]);
    expect(again).toMatchObject({ id: 'job:dead', body: 'job:dead', attempts: 1 });
    expect(await q.ack([again as Message])).toBe(1);
    expect((await q.poll(0)).messages).toEqual([]);
    // As add() does with a dead letter's id: the new message replaced it.
    expect(await q.get('job:dead')).toMatchObject({ state: 'done' });
    expect(await pendingIds(q)).toBe(left);
  });

  it('after its lease expired, it runs once more (counted as the next attempt)', async () => {
    const q = await open();
    await setUp(q);
    await leasedThenReadded(q, 'job:expired', 400);
    const [again, ...more] = await claimAtLeast(q, 0, 1);
    expect(more).toEqual([]);
    expect(again).toMatchObject({ id: 'job:expired', attempts: 2 });
    expect(await q.ack([again as Message])).toBe(1);
    expect((await q.poll(0)).messages).toEqual([]);
    expect(await pendingIds(q)).toBe(left); // the re-added member went with the retry
  });
});

it('a raw member re-added while its id waits in the ready set is that same message', async () => {
  const q = await open();
  await q.add('body', { group: 0, priority: 2, id: 'job:ready' }); // ready at once, by priority
  // Due earlier than the add (a ready member of the same due time would be the same member).
  const earlier = (await redisNow(redis.client)) - 5000;
  await redis.client.zadd(keyOf(q.config.prefix, 0, 'delayed'), earlier, 'job:ready');
  const claimed = await claimAtLeast(q, 0, 1);
  // Before, promotion put a second ready member beside it, and one claim leased both.
  expect(claimed.map((m) => m.id)).toEqual(['job:ready']);
  expect(claimed[0]?.body).toBe('body');
  expect(await q.ack(claimed)).toBe(1);
  expect((await q.poll(0)).messages).toEqual([]);
  expect(await pendingIds(q)).toBe(0);
});

interface Event {
  id: string;
  event: 'start' | 'end';
  run: number;
  running?: number;
}

describe.each(paths)('actors, %s path', (path, setUp) => {
  it('never run the re-added id beside its running one, and run it exactly twice', async () => {
    const prefix = `rerun${path.startsWith('direct') ? 'd' : 'p'}`;
    const q = await open({ prefix });
    await setUp(q);
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 1,
      handler: fixture('overlap.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    const member = `raw:${prefix}`;
    const events = async () =>
      (await redis.client.lrange('overlap', 0, -1))
        .map((line) => JSON.parse(line) as Event)
        .filter((e) => e.id === member);
    try {
      await zaddNow(q, member);
      await waitFor('the first run', async () => ((await events()).length ? true : undefined));
      const readded = await zaddNow(q, member);
      // A claim saw the re-added member: it took it (leased again) or set it aside (a later score).
      const delayed = keyOf(prefix, 0, 'delayed');
      await waitFor('a claim to see the re-added member', async () => {
        const score = await redis.client.zscore(delayed, member);
        return score === null || Number(score) > readded ? true : undefined;
      });
      await redis.client.set(`fixture:go:${member}`, '1');
      await waitFor('two runs ended', async () => {
        const ends = (await events()).filter((e) => e.event === 'end');
        const left = setUp === withPriorities ? 1 : 0; // 'far'
        return ends.length >= 2 && (await pendingIds(q)) === left ? true : undefined;
      });
      const starts = (await events()).filter((e) => e.event === 'start');
      expect(starts.map((s) => s.running)).toEqual([1, 1]); // never two at once
      expect(starts.map((s) => s.run)).toEqual([1, 2]);
      const { totals } = await launcher.stats();
      expect(totals.stale).toBe(0);
      expect(totals.done).toBe(2);
    } finally {
      await launcher.stop();
    }
  });
});
