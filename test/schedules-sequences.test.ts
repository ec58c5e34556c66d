/**
 * Random sequences of upserts (changing body, interval, cron, group, key), removes, leases and
 * time steps on the real scripts (issue 24, section 3), against a model: one schedule per id,
 * in the group it was made in (a change of group or key is refused); one pending occurrence,
 * at its state's next time (waiting, or leased by a consumer); what fires never twice nor out
 * of order, never closer than the smaller interval in force, and, while the timing stays, on
 * the grid (the next after the last: nothing lost). At the end, what fires is what preview
 * said. The test plays the consumers with a clock of its own (behind Redis's, so a lease takes
 * whatever is pending). At least 200 sequences in CI: SKYQ_PROPERTY_RUNS, SKYQ_PROPERTY_SEED.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashString } from '../src/base/keys.js';
import type { Message, ScheduleSpec } from '../src/index.js';
import { propertyParameters } from './helpers/property.js';
import { redisNow, useQueueRedis } from './helpers/queue.js';
import { allOccurrences, clockedSchedules, occurrenceMessage } from './helpers/schedules.js';

const redis = useQueueRedis();
const GROUPS = 3;
const IDS = ['a', 'b'] as const;
/** Cron patterns (UTC) whose grid is the multiples of a period, and that period. */
const CRON: Record<string, number> = {
  '*/2 * * * * *': 2000,
  '*/5 * * * * *': 5000,
  '0,20,40 * * * * *': 20_000,
};
type Timing = { every: number } | { cron: string };
const periodOf = (t: Timing) => ('every' in t ? t.every : (CRON[t.cron] as number));
const sameTiming = (a: Timing, b: Timing) =>
  ('every' in a ? `e${a.every}` : a.cron) === ('every' in b ? `e${b.every}` : b.cron);
/** The grid time after `at` (a grid time) that comes after `ran`, when it ran (at or later). */
const successor = (t: Timing, at: number, ran = at) => {
  const period = periodOf(t);
  const base = 'every' in t ? at : 0; // an every grid runs from its times, a cron's from 0
  return base + (Math.floor((Math.max(at, ran) - base) / period) + 1) * period;
};

const id = fc.constantFrom(...IDS);
const timing: fc.Arbitrary<Timing> = fc.oneof(
  fc.constantFrom(1000, 2000, 3000, 5000).map((every) => ({ every })),
  fc.constantFrom(...Object.keys(CRON)).map((cron) => ({ cron })),
);
const where = fc.oneof(
  fc.constant({}),
  fc.integer({ min: 0, max: GROUPS - 1 }).map((group) => ({ group })),
  fc.constantFrom('k0', 'k1', 'k2').map((key) => ({ key })),
);
const action = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('upsert' as const),
      id,
      timing,
      where,
      body: fc.constantFrom('x', 'y'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      ms: fc.integer({ min: 0, max: 8000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('stall' as const),
      ms: fc.integer({ min: 0, max: 15_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lease' as const), id }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), id }) },
);

/**
 * One life of an id, from its upsert to its remove, and the occurrences consumers got of it,
 * in order: a waiting one when it fires, a leased one when it is leased (it runs, whatever
 * changes after).
 */
interface Life {
  group: number;
  timing: Timing;
  /** its first occurrence, as made */
  first: number;
  lastGot?: number;
  /** when the next after lastGot was planned: when lastGot ran (late after a stall), or an upsert */
  ranAt?: number;
  /** the least gap to the next one got (null: only later) */
  floor: number | null;
  /** no change of timing since the last one got: the next is the grid's next */
  kept: boolean;
}

describe('random upsert, remove, lease and time sequences against a model', () => {
  it('one schedule per id, one pending occurrence, gaps never below the interval', async () => {
    const queue = await redis.queue({ groups: GROUPS });
    const home = (name: string) => hashString(`schedule:${name}`) % GROUPS;
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 1, maxLength: 14 }),
        fc.constantFrom(...IDS),
        async (actions, kept) => {
          sequences++;
          await redis.plain.flushdb();
          const start = (await redisNow(redis.plain)) - 86_400_000;
          const { schedules, clock } = clockedSchedules(queue, start);
          const lives = new Map<string, Life>();
          const leased: { message: Message; life: Life }[] = [];
          const fired: [string, number][] = [];

          const got = (life: Life, at: number) => {
            if (life.lastGot === undefined) {
              if (life.kept) expect(at).toBe(life.first);
            } else {
              expect(at).toBeGreaterThan(life.lastGot);
              if (life.floor !== null) expect(at - life.lastGot).toBeGreaterThanOrEqual(life.floor);
              if (life.kept) expect(at).toBe(successor(life.timing, life.lastGot, life.ranAt));
            }
            life.lastGot = at;
            life.ranAt = at;
            life.kept = true;
            life.floor = 'every' in life.timing ? life.timing.every : null;
          };

          /** Consumers on time: everything due by now + ms, leased or waiting, in due order. */
          const tick = async (ms: number) => {
            const until = clock.now + ms;
            for (;;) {
              const due: {
                at: number;
                id: string;
                group: number;
                lease?: (typeof leased)[number];
              }[] = [];
              for (const entry of leased) {
                const tag = entry.message.schedule as { id: string; at: number };
                if (tag.at <= until)
                  due.push({ at: tag.at, id: tag.id, group: entry.message.group, lease: entry });
              }
              for (const name of lives.keys()) {
                const next = (await schedules.get(name))?.next;
                const group = lives.get(name)?.group;
                const held = leased.some(
                  (l) =>
                    l.message.group === group &&
                    l.message.schedule?.id === name &&
                    l.message.schedule.at === next,
                );
                if (next !== undefined && next <= until && !held)
                  due.push({ at: next, id: name, group: group as number });
              }
              const first = due.sort((x, y) => x.at - y.at)[0];
              if (!first) break;
              clock.now = Math.max(clock.now, first.at);
              if (first.lease) {
                const advance = await schedules.advance(first.lease.message);
                expect(advance.run).toBe(true);
                expect(await queue.ack([first.lease.message])).toBe(1);
                leased.splice(leased.indexOf(first.lease), 1);
                // Got when leased; unless a new life of its id took it as its own first one.
                const now = lives.get(first.id);
                if (advance.outcome === 'advanced' && now && now !== first.lease.life) {
                  got(now, first.at);
                }
                // Its advance planned the next from when it ran (late, after a stall).
                if (advance.outcome === 'advanced' && now?.lastGot === first.at)
                  now.ranAt = clock.now;
              } else {
                const life = lives.get(first.id) as Life;
                const advance = await schedules.advance(
                  occurrenceMessage(first.id, first.group, first.at),
                );
                // The catch-up (its log line) exactly when a later grid time passed already.
                const late = successor(life.timing, first.at) <= clock.now;
                expect(advance).toEqual({
                  run: true,
                  outcome: 'advanced',
                  ...(late ? { catchUp: true } : {}),
                });
                expect(
                  await queue.cancel(`schedule:${first.id}:${first.at}`, { group: first.group }),
                ).toBe(true);
                got(life, first.at);
                life.ranAt = clock.now;
              }
              fired.push([first.id, first.at]);
            }
            clock.now = until;
          };

          const check = async () => {
            const list = await schedules.list();
            expect(list.map((s) => s.id)).toEqual([...lives.keys()].sort());
            const occurrences = await allOccurrences(redis.plain, queue);
            for (const name of IDS) {
              const state = list.find((s) => s.id === name);
              const mine = occurrences.get(name) ?? [];
              const ours = leased
                .filter((l) => l.message.schedule?.id === name)
                .map((l) => ({ group: l.message.group, at: l.message.schedule?.at as number }));
              const leasedHere = mine.filter((o) => o.state === 'leased');
              const order = (x: { at: number; group: number }, y: typeof x) =>
                x.at - y.at || x.group - y.group;
              expect(leasedHere.map(({ group, at }) => ({ group, at })).sort(order)).toEqual(
                ours.sort(order),
              );
              const waiting = mine.filter((o) => o.state === 'waiting');
              const held = ours.some((o) => o.group === state?.group && o.at === state?.next);
              if (!state || held) expect(waiting).toEqual([]);
              else {
                expect(state.group).toBe(lives.get(name)?.group);
                expect(waiting).toEqual([{ group: state.group, at: state.next, state: 'waiting' }]);
              }
            }
          };

          for (const step of actions) {
            if (step.kind === 'tick') await tick(step.ms);
            else if (step.kind === 'stall')
              clock.now += step.ms; // no consumer runs
            else if (step.kind === 'remove') {
              expect(await schedules.remove(step.id)).toBe(lives.has(step.id));
              lives.delete(step.id);
            } else if (step.kind === 'lease') {
              const life = lives.get(step.id);
              if (!life) continue;
              for (const message of await queue.claim(life.group, 100, 3_600_000)) {
                const tag = message.schedule as { id: string; at: number };
                const owner = lives.get(tag.id) as Life;
                leased.push({ message, life: owner });
                got(owner, tag.at);
              }
            } else {
              const life = lives.get(step.id);
              const spec = { ...step.timing, ...step.where, body: step.body } as ScheduleSpec;
              const target =
                'group' in step.where
                  ? step.where.group
                  : 'key' in step.where
                    ? hashString(step.where.key) % GROUPS
                    : undefined;
              if (life && target !== undefined && target !== life.group) {
                await expect(schedules.upsert(step.id, spec)).rejects.toThrow(
                  `schedule ${step.id} lives in group ${life.group};`,
                );
                continue;
              }
              const pending = life && (await schedules.get(step.id))?.next;
              const running = leased.some(
                ({ message: m }) =>
                  m.group === life?.group &&
                  m.schedule?.id === step.id &&
                  m.schedule.at === pending,
              );
              const state = await schedules.upsert(step.id, spec);
              expect(state.body).toBe(step.body);
              // The same timing while its pending one runs: the next is planned from now.
              if (life && running && sameTiming(life.timing, step.timing) && state.next !== pending)
                life.ranAt = Math.max(life.ranAt ?? 0, clock.now - 1);
              if (!life) {
                lives.set(step.id, {
                  group: target ?? home(step.id),
                  timing: step.timing,
                  first: state.next as number,
                  floor: null,
                  kept: true,
                });
              } else if (!sameTiming(life.timing, step.timing)) {
                const every = 'every' in step.timing ? step.timing.every : null;
                const before = 'every' in life.timing ? life.timing.every : every;
                // The change's rule: no closer than the smaller interval (a cron has none).
                life.floor =
                  every === null
                    ? null
                    : Math.min(life.floor ?? before ?? every, before ?? every, every);
                life.kept = false;
                life.timing = step.timing;
              }
              expect(state.group).toBe(lives.get(step.id)?.group);
            }
            await check();
          }
          // Every leased one runs; then one schedule alone: what fires is what preview said.
          const lastLeased = Math.max(clock.now, ...leased.map((l) => l.message.schedule?.at ?? 0));
          await tick(lastLeased - clock.now);
          expect(leased).toEqual([]);
          for (const name of IDS) if (name !== kept) await schedules.remove(name);
          for (const name of [...lives.keys()]) if (name !== kept) lives.delete(name);
          if (!lives.has(kept)) return;
          const said = await schedules.preview(kept, { count: 3 });
          const before = fired.length;
          await tick((said[2] as number) - clock.now);
          expect(fired.slice(before).map(([name, at]) => `${name}@${at}`)).toEqual(
            said.map((at) => `${kept}@${at}`),
          );
          await check();
        },
      ),
      propertyParameters(200),
    );
    expect(sequences).toBeGreaterThanOrEqual(Math.min(200, propertyParameters(200).numRuns));
  }, 120_000);
});
