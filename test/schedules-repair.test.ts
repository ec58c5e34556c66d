/**
 * The schedule gap: an occurrence whose consumer took it and died before starting it (so
 * before schedules.advance added the next one) runs out its lease; on its last attempt the
 * next claim dead-letters it, and nothing ever delivers it again to advance the schedule.
 * Actors now repair such a schedule (src/runtime/schedule-repair.ts): a schedule whose
 * pending occurrence is gone (dead, cancelled) gets its next one, exactly once.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, recorded, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('schedule repair', () => {
  it('an occurrence dead-lettered by lease expiry before it started: the schedule goes on', async () => {
    const where = { redis: redis.server.url, prefix: 'srepair', groups: 2 };
    const queue = new Queue(where);
    await queue.ready();
    const list = 'srepair:done';
    const state = await queue.schedules.upsert('tick', {
      every: '1s',
      attempts: 1,
      body: { list },
    });
    const group = state.group;
    // A consumer leases the first occurrence and dies before it starts: no advance.
    const taken = await waitFor('the first occurrence', async () => {
      const polled = await queue.poll(group, { max: 10, leaseMs: 150 });
      return polled.messages.length > 0 ? polled.messages : undefined;
    });
    expect(taken.map((m) => m.schedule?.at)).toEqual([state.next]);
    // Its lease runs out; on its last (only) attempt the next claim dead-letters it.
    await waitFor('the dead letter', async () => {
      await queue.poll(group, { max: 10, leaseMs: 150 });
      const dead = await queue.deadLetters.list();
      return dead.length === 1 ? dead : undefined;
    });
    expect((await queue.schedules.get('tick'))?.next).toBe(state.next); // the gap
    const launchers = await Promise.all(
      [0, 1].map(() =>
        startActors({ ...where, logDir: tempDir(), handler: fixture('record.mjs') }),
      ),
    );
    try {
      // The schedule goes on, with each occurrence handled once by two launchers.
      const handled = await waitFor(
        'three occurrences after the lost one',
        async () => {
          const ids = await recorded(redis.client, list);
          return ids.length >= 3 ? ids : undefined;
        },
        20_000,
      );
      expect(new Set(handled).size).toBe(handled.length);
      const repaired = await queue.schedules.get('tick');
      expect(repaired?.next).toBeGreaterThan(state.next as number);
      // The lost occurrence stays a dead letter, counted as one that happened.
      expect((await queue.deadLetters.list()).map((d) => d.id)).toEqual([
        `schedule:tick:${state.next}`,
      ]);
    } finally {
      await Promise.all(launchers.map((l) => l.stop()));
      await queue.close();
    }
  }, 60_000);
});
