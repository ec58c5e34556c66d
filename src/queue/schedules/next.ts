// When a schedule's occurrences are: pure functions of its state and a time, so a test can
// drive them with a clock it controls. `every` is a grid from the schedule's anchor. A cron
// pattern names wall-clock times of its zone (croner reads the pattern and walks the calendar,
// in UTC so that it sees wall times as they are); zone.ts turns each into an instant: a wall
// time a fall-back day repeats runs once, in its first pass, and the wall times a
// spring-forward day skips run once, together, right after the jump (as cronie runs a daily
// job that day). Times are ms on Redis's clock.
import { Cron } from 'croner';
import type { ScheduleState } from './spec.js';
import { instantOf, wallCursor } from './zone.js';

type Timing = Pick<ScheduleState, 'every' | 'cron' | 'tz' | 'anchor' | 'startAt' | 'endAt'>;

const calendars = new Map<string, Cron>();
const MAX_CALENDARS = 500;

/** The pattern's calendar of wall times (parsed once; a few hundred patterns kept). */
export function wallCalendar(pattern: string): Cron {
  let calendar = calendars.get(pattern);
  if (!calendar) {
    calendar = new Cron(pattern, { timezone: 'UTC', paused: true });
    if (calendars.size >= MAX_CALENDARS) calendars.clear();
    calendars.set(pattern, calendar);
  }
  return calendar;
}

/** The first instant after `from` that a cron pattern names in `tz`; null when none. */
function cronAfter(pattern: string, tz: string, from: number): number | null {
  const calendar = wallCalendar(pattern);
  let cursor = wallCursor(tz, from);
  // One step suffices (a wall time after the cursor names an instant after `from`); the bound
  // only guards against zone rules stranger than any in use.
  for (let i = 0; i < 1000; i++) {
    const wall = calendar.nextRun(new Date(cursor))?.getTime();
    if (wall === undefined) return null;
    const at = instantOf(tz, wall);
    if (at > from) return at;
    cursor = wall;
  }
  return null;
}

/** The first grid time strictly after `after`, within startAt..endAt; null when none is left. */
export function occurrenceAfter(timing: Timing, after: number): number | null {
  const from = Math.max(after, (timing.startAt ?? Number.NEGATIVE_INFINITY) - 1);
  let at: number | null;
  if (timing.every !== undefined) {
    const steps = Math.floor((from - timing.anchor) / timing.every) + 1;
    at = timing.anchor + Math.max(0, steps) * timing.every;
  } else {
    at = cronAfter(timing.cron as string, timing.tz, from);
  }
  if (at === null || (timing.endAt !== undefined && at > timing.endAt)) return null;
  return at;
}

/** The first occurrence from `now` on (an upsert's). */
export const firstOccurrence = (timing: Timing, now: number): number | null =>
  occurrenceAfter(timing, now - 1);

export interface Step {
  /** run this occurrence's handler, or let it go (missed: 'skip' after downtime) */
  run: boolean;
  /** the next occurrence's grid time; null when the schedule ends */
  next: number | null;
  /** a later grid time has passed already: this one is the catch-up (run) or let go */
  missed?: true;
}

/**
 * A consumer holds occurrence `at` at `now`. When a later grid time has passed already, no
 * launcher ran for a while: 'once' runs this one as the catch-up and 'skip' lets it go; either
 * way the next is the first grid time after now, so occurrences never pile up.
 */
export function step(state: Timing & Pick<ScheduleState, 'missed'>, at: number, now: number): Step {
  const following = occurrenceAfter(state, at);
  if (following === null || following > now) return { run: true, next: following };
  return { run: state.missed === 'once', next: occurrenceAfter(state, now), missed: true };
}
