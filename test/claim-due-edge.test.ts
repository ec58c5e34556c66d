// No claim leases a message before its due time on Redis's clock, also a claim made a
// millisecond or two before it (issue 24, section 3: claim.lua reading the delayed set to
// `now + lookahead + 5` passed every test). Messages due at each of 300 consecutive ms are
// claimed by a tight loop of claims, straight from the delayed set, through the ready set (a
// priority is pending), and with a lookahead; every leased message's due time is checked
// against the `now` of the claim that leased it. Real redis-server.
import { describe, expect, it } from 'vitest';
import type { PollResult, Queue } from '../src/index.js';
import { redisNow, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const SPREAD_MS = 300;

interface Early {
  id: string;
  dueAt: number;
  claimNow: number;
}

/**
 * Adds a message due at each ms from 40 ms from now on, claims in a loop until all are leased,
 * and returns the ones leased before their due time (plus the lookahead) on the claim's clock.
 */
async function claimAroundDueTimes(q: Queue, lookaheadMs: number): Promise<Early[]> {
  const start = (await redisNow(redis.plain)) + 40;
  const ids = await q.addBulk(
    Array.from({ length: SPREAD_MS }, (_, i) => ({
      body: i,
      options: { group: 0, runAt: start + i },
    })),
  );
  const early: Early[] = [];
  let leased = 0;
  let inside = 0;
  const deadline = Date.now() + 20_000;
  while (leased < ids.length && Date.now() < deadline) {
    const polled: PollResult = await q.poll(0, { max: 1000, lookaheadMs });
    if (polled.now + lookaheadMs < start + SPREAD_MS - 1) inside += 1;
    for (const m of polled.messages) {
      leased += 1;
      if (m.dueAt > polled.now + lookaheadMs)
        early.push({ id: m.id, dueAt: m.dueAt, claimNow: polled.now });
    }
    await q.ack(polled.messages);
  }
  expect(leased).toBe(ids.length);
  // Claims came while later due times were a few ms away (each claim inside the spread has
  // some): on a quiet machine about one a ms, a handful on a loaded one (a clean-clone run
  // made 6 in all over 150 ms, so the spread is 300 ms).
  expect(inside).toBeGreaterThanOrEqual(5);
  return early;
}

describe('a claim a few ms before due times', () => {
  it('leases nothing early straight from the delayed set', async () => {
    const q = await redis.queue({ groups: 1 });
    expect(await claimAroundDueTimes(q, 0)).toEqual([]);
  });

  it('leases nothing early through the ready set (a priority is pending)', async () => {
    const q = await redis.queue({ groups: 1 });
    await q.add('keeps the group on the ready path', { group: 0, priority: 5, delay: 3_600_000 });
    expect(await claimAroundDueTimes(q, 0)).toEqual([]);
  });

  it('leases nothing due past its lookahead', async () => {
    const q = await redis.queue({ groups: 1 });
    expect(await claimAroundDueTimes(q, 20)).toEqual([]);
  });
});
