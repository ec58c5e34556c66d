/**
 * Property tests of schedule occurrences (issue 24, section 3) against a small reference model.
 * Random cron specs (5 and 6 fields; single, list, range and step fields biased to the hours
 * and minutes clocks change at) in zones with DST (one hour, and Lord Howe's 30 minutes), from
 * random instants within 30 h of a change. The model enumerates the matching wall-clock times
 * and maps each through the zone's offsets, found by its own search: a time that exists once
 * runs then, one a fall-back day repeats runs in its first pass only, and the times a
 * spring-forward day skips run once, at the jump. preview must give exactly that list: no time
 * twice, none lost but by that rule. Then, on the real scripts, what consumers fire, one
 * occurrence after another, is what preview said. SKYQ_PROPERTY_RUNS / SKYQ_PROPERTY_SEED.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyParameters } from './helpers/property.js';
import { useQueueRedis } from './helpers/queue.js';
import { clockedSchedules, occurrenceMessage } from './helpers/schedules.js';

const redis = useQueueRedis();
const COUNT = 12;
const DAY = 86_400_000;

/** The zones and their clock changes of 2026 and 2027 (instants). */
const CHANGES: Record<string, string[]> = {
  'Europe/Berlin': [
    '2026-03-29T01:00Z',
    '2026-10-25T01:00Z',
    '2027-03-28T01:00Z',
    '2027-10-31T01:00Z',
  ],
  'America/New_York': [
    '2026-03-08T07:00Z',
    '2026-11-01T06:00Z',
    '2027-03-14T07:00Z',
    '2027-11-07T06:00Z',
  ],
  'Australia/Lord_Howe': [
    '2026-04-04T15:00Z',
    '2026-10-03T15:30Z',
    '2027-04-03T15:00Z',
    '2027-10-02T15:30Z',
  ],
};

/** A cron field: its text and the values it matches. */
interface Field {
  text: string;
  values: number[];
}
const range = (from: number, to: number, step = 1) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

function field(max: number, likely: number[]): fc.Arbitrary<Field> {
  const value = fc.oneof(fc.constantFrom(...likely), fc.integer({ min: 0, max }));
  return fc.oneof(
    value.map((v) => ({ text: String(v), values: [v] })),
    fc.uniqueArray(value, { minLength: 2, maxLength: 4 }).map((vs) => ({
      text: vs.join(','),
      values: [...vs].sort((a, b) => a - b),
    })),
    fc.tuple(value, value).map(([a, b]) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      return { text: `${lo}-${hi}`, values: range(lo, hi) };
    }),
    fc.integer({ min: 2, max: Math.min(30, max) }).map((s) => ({
      text: `*/${s}`,
      values: range(0, max, s),
    })),
    fc.tuple(value, fc.integer({ min: 2, max: Math.min(20, max) })).map(([lo, s]) => ({
      text: `${lo}-${max}/${s}`,
      values: range(lo, max, s),
    })),
  );
}

const spec = fc.record({
  zone: fc.constantFrom(...Object.keys(CHANGES)),
  change: fc.integer({ min: 0, max: 3 }),
  shift: fc.integer({ min: -30 * 3_600_000, max: 30 * 3_600_000 }),
  seconds: fc.option(field(59, [0, 30, 59]), { nil: undefined }),
  minutes: field(59, [0, 15, 29, 30, 45, 59]),
  hours: field(23, [0, 1, 2, 3]),
});
type Spec = typeof spec extends fc.Arbitrary<infer T> ? T : never;

const patternOf = (s: Spec) =>
  `${s.seconds ? `${s.seconds.text} ` : ''}${s.minutes.text} ${s.hours.text} * * *`;

const offsetNames = new Map<string, Intl.DateTimeFormat>();
/** The zone's offset at an instant, read from Intl's "GMT+10:30" (another road than zone.ts). */
function offset(zone: string, at: number): number {
  let names = offsetNames.get(zone);
  if (!names) {
    names = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    offsetNames.set(zone, names);
  }
  const name = names.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value as string;
  const match = /GMT([+-])(\d\d):(\d\d)/.exec(name);
  if (!match) return 0;
  const ms = (Number(match[2]) * 60 + Number(match[3])) * 60_000;
  return match[1] === '-' ? -ms : ms;
}

/** Stretches of constant offset covering [from, to): start, end, offset. */
function stretches(zone: string, from: number, to: number) {
  const out: { start: number; end: number; offset: number }[] = [];
  let start = from;
  let current = offset(zone, from);
  for (let at = from + 600_000; at <= to; at += 600_000) {
    if (offset(zone, at) === current) continue;
    let [lo, hi] = [at - 600_000, at]; // the change lies in (lo, hi]
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (offset(zone, mid) === current) lo = mid;
      else hi = mid;
    }
    out.push({ start, end: hi, offset: current });
    start = hi;
    current = offset(zone, hi);
  }
  out.push({ start, end: to, offset: current });
  return out;
}

/** The model: the first COUNT run times after `from`. */
function modelRuns(s: Spec, from: number): number[] {
  const start = Math.floor((from - 2 * DAY) / DAY) * DAY; // whole seconds: changes fall on them
  const pieces = stretches(s.zone, start, from + (COUNT + 3) * DAY);
  const runs = new Set<number>();
  const firstDay = Math.floor((from + pieces[0].offset) / DAY) * DAY - DAY;
  for (let day = firstDay; day < from + (COUNT + 1) * DAY; day += DAY) {
    for (const h of s.hours.values)
      for (const m of s.minutes.values)
        for (const sec of s.seconds?.values ?? [0]) {
          const wall = day + ((h * 60 + m) * 60 + sec) * 1000;
          const real = pieces
            .filter((p) => wall - p.offset >= p.start && wall - p.offset < p.end)
            .map((p) => wall - p.offset);
          // None: the wall time is skipped; it runs at the start of the stretch after the jump.
          const at =
            real.length > 0
              ? Math.min(...real)
              : pieces.find((p) => p.start + p.offset > wall)?.start;
          if (at !== undefined && at > from) runs.add(at);
        }
  }
  return [...runs].sort((a, b) => a - b).slice(0, COUNT);
}

const fromOf = (s: Spec) => Date.parse(CHANGES[s.zone]?.[s.change] as string) + s.shift;

describe('schedule occurrences against a reference model', () => {
  it('cron specs in DST zones: preview gives the model’s run times', async () => {
    const queue = await redis.queue();
    await fc.assert(
      fc.asyncProperty(spec, async (s) => {
        const from = fromOf(s);
        const runs = await queue.schedules.preview(
          { cron: patternOf(s), tz: s.zone },
          { from: from + 1, count: COUNT },
        );
        expect(runs).toEqual(modelRuns(s, from));
      }),
      propertyParameters(150),
    );
  });

  it('what consumers fire, one occurrence after another, is what preview said', async () => {
    const queue = await redis.queue({ groups: 2 });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          spec.map((s) => ({ from: fromOf(s), spec: { cron: patternOf(s), tz: s.zone } })),
          fc.record({
            from: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 0, 1) }),
            spec: fc.record({ every: fc.integer({ min: 100, max: 3 * DAY }) }),
          }),
        ),
        async ({ from, spec: chosen }) => {
          const id = `p${++n}`;
          const { schedules, clock } = clockedSchedules(queue, from);
          const made = await schedules.upsert(id, chosen);
          const said = await schedules.preview(id, { count: 6 });
          expect(said).toEqual(await schedules.preview(chosen, { from, count: 6 }));
          const fired: number[] = [];
          let at = made.next as number;
          for (let i = 0; i < 6; i++) {
            clock.now = at; // a consumer on time
            await schedules.advance(occurrenceMessage(id, made.group, at));
            fired.push(at);
            at = (await schedules.get(id))?.next as number;
          }
          expect(fired).toEqual(said);
          await schedules.remove(id);
        },
      ),
      propertyParameters(40),
    );
  });
});
