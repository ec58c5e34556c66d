/**
 * Schedules under concurrency (issue 24, section 3). Two consumers advancing one occurrence at
 * the same moment: the compare and set in schedule-advance.lua (`state.next ~= at`) is all
 * that stops the second from counting it again and planning from it; Schedules.advance reads
 * the state first and would hide the window, so the test races two reads past it, and also
 * calls the script twice itself. (With the compare removed, both tests fail: the second call
 * answers 'advanced' and the count doubles; no other test noticed that mutation.) Then three
 * launchers and three upserters change the same schedules for 20 s (6 s when
 * SKYQ_PROPERTY_RUNS is under 200), moves refused, every occurrence counted: exactly one
 * message per grid time while the timing stays, and no two closer than the smaller interval
 * while it changes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { propertyParameters } from './helpers/property.js';
import { fixture, recorded, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';
import { clockedSchedules, occurrenceMessage, occurrencesOf } from './helpers/schedules.js';

const redis = useRuntimeRedis();
const T0 = Date.UTC(2031, 0, 1); // far ahead of Redis's clock: nothing is ever due

describe('two consumers advance one occurrence at the same moment', () => {
  it('past the pre-check: one advances it, the other finds it stale; counted once', async () => {
    const where = { redis: redis.server.url, prefix: 'advrace', groups: 2 };
    const queues = [new Queue(where), new Queue(where)];
    try {
      const [a, b] = queues.map((q) => clockedSchedules(q, T0));
      if (!a || !b) throw new Error('two queues');
      const made = await a.schedules.upsert('tick', { every: '1s' });
      let at = made.next as number;
      for (let round = 1; round <= 30; round++) {
        a.clock.now = b.clock.now = at;
        const message = occurrenceMessage('tick', made.group, at);
        // Both read the state (next = at) before either writes: the script decides.
        const outcomes = await Promise.all([
          a.schedules.advance(message),
          b.schedules.advance(message),
        ]);
        expect(outcomes.map((o) => o.outcome).sort()).toEqual(['advanced', 'stale']);
        const state = await a.schedules.get('tick');
        expect(state).toMatchObject({ count: round, last: at, next: at + 1000 });
        at = state?.next as number;
      }
      expect(await occurrencesOf(redis.client, queues[0] as Queue, 'tick')).toHaveLength(31);
    } finally {
      await Promise.all(queues.map((q) => q.close()));
    }
  });

  it('the script called twice for one occurrence: the second changes nothing', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'advtwice', groups: 1 });
    try {
      const { schedules } = clockedSchedules(queue, T0);
      const made = await schedules.upsert('tick', { every: '1s', limit: 5 });
      const args = [1, 'tick', T0, made.digest, T0 + 1000, 0];
      const first = (await queue.run('schedule-advance', 0, args)) as string[];
      const second = (await queue.run('schedule-advance', 0, args)) as string[];
      expect([first[0], second[0]]).toEqual(['advanced', 'stale']);
      expect(await schedules.get('tick')).toMatchObject({ count: 1, last: T0, next: T0 + 1000 });
    } finally {
      await queue.close();
    }
  });
});

describe('three launchers and three upserters changing the same schedules', () => {
  it('every occurrence counted: one message per grid time; moves refused', async () => {
    const runMs = propertyParameters(200).numRuns >= 200 ? 20_000 : 6_000;
    const where = { redis: redis.server.url, prefix: 'srace', groups: 2 };
    const list = 'srace:done';
    const pick = <T>(choices: T[]) => choices[Math.floor(Math.random() * choices.length)] as T;
    const specs = {
      tick: () => ({
        every: 1000,
        body: { list, v: pick(['a', 'b', 'c']) },
        priority: pick([0, 2]),
      }),
      cron: () => ({
        cron: '*/2 * * * * *',
        body: { list, v: pick(['a', 'b']) },
        name: pick(['x', 'y']),
      }),
      swing: () => ({ every: pick([700, 1100]), body: { list } }),
    };
    const queues = Array.from({ length: 3 }, () => new Queue(where));
    const first = queues[0] as Queue;
    const launchers = await Promise.all(
      [0, 1, 2].map(() =>
        startActors({ ...where, logDir: tempDir(), handler: fixture('record-late.mjs') }),
      ),
    );
    const made = await Promise.all(
      Object.entries(specs).map(([id, spec]) => first.schedules.upsert(id, spec())),
    );
    let running = true;
    let refused = 0;
    const upserters = queues.map(async (queue) => {
      let calls = 0;
      while (running) {
        const id = pick(Object.keys(specs)) as keyof typeof specs;
        const home = made.find((s) => s.id === id)?.group as number;
        if (Math.random() < 0.1) {
          await queue.schedules.upsert(id, { ...specs[id](), group: 1 - home }).then(
            () => expect.fail(`${id} moved to another group`),
            (error: Error) => {
              expect(error.message).toContain(`schedule ${id} lives in group ${home};`);
              refused++;
            },
          );
        } else await queue.schedules.upsert(id, specs[id]());
        calls++;
        await sleep(20 + Math.random() * 100);
      }
      return calls;
    });
    try {
      await sleep(runMs);
      running = false;
      const calls = (await Promise.all(upserters)).reduce((a, b) => a + b, 0);
      expect(calls).toBeGreaterThan(runMs / 100);
      expect(refused).toBeGreaterThan(0);
      const states = await first.schedules.list();
      expect(states.map((s) => [s.id, s.group])).toEqual(
        [...made].sort((x, y) => (x.id < y.id ? -1 : 1)).map((s) => [s.id, s.group]),
      );
      for (const state of states) {
        // One pending occurrence, at its next (waiting, or a consumer just took it); beside it
        // at most one running, whose spec changed while it was leased.
        const pending = await occurrencesOf(redis.client, first, state.id);
        expect(pending.filter((o) => o.at === state.next)).toHaveLength(1);
        expect(pending.filter((o) => o.at !== state.next && o.state === 'waiting')).toEqual([]);
        await first.schedules.remove(state.id);
      }
      await waitFor('the occurrences leased before the removes handled', async () => {
        const counts = await first.counts();
        return counts.every((c) => c.delayed + c.ready + c.active === 0) ? true : undefined;
      });
    } finally {
      running = false;
      await Promise.all(launchers.map((l) => l.stop()));
      await Promise.all(queues.map((q) => q.close()));
    }
    const ids = await recorded(redis.client, list);
    expect(new Set(ids).size).toBe(ids.length); // no occurrence twice
    const lateness = new Map(
      (await recorded(redis.client, `${list}:late`)).map((line) => {
        const [id, ms] = line.split(' ');
        return [id as string, Number(ms)];
      }),
    );
    /** Each gap to the next grid time, and how late the one before it ran. */
    const gaps = (id: string, interval: number) => {
      const ats = ids
        .filter((x) => x.startsWith(`schedule:${id}:`))
        .map((x) => Number(x.slice(`schedule:${id}:`.length)))
        .sort((a, b) => a - b);
      expect(ats.length).toBeGreaterThanOrEqual(Math.floor(runMs / interval / 2));
      return ats.slice(1).map((at, i) => {
        const before = ats[i] as number;
        return { gap: at - before, late: lateness.get(`schedule:${id}:${before}`) as number };
      });
    };
    // On the grid, none lost: the next grid time, unless the one before ran so late that later
    // ones had passed (the catch-up rule: missed 'once' runs it, and goes on after now).
    const onGrid = (gap: number, late: number, interval: number) =>
      gap === interval ||
      (gap % interval === 0 && gap <= (Math.floor(late / interval) + 1) * interval);
    for (const { gap, late } of gaps('tick', 1000))
      expect(onGrid(gap, late, 1000), `${gap} after ${late} ms late`).toBe(true);
    for (const { gap, late } of gaps('cron', 2000))
      expect(onGrid(gap, late, 2000), `${gap} after ${late} ms late`).toBe(true);
    expect(Math.min(...gaps('swing', 1100).map((g) => g.gap))).toBeGreaterThanOrEqual(700);
  }, 90_000);
});
