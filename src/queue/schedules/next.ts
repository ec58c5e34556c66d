// When a schedule's occurrences are: pure functions of its state and a time, so a test can
// drive them with a clock it controls. Cron patterns and time zones (DST included) are
// croner's; `every` is a grid from the schedule's anchor. Times are ms on Redis's clock.
import { Cron } from 'croner';
import type { ScheduleState } from './spec.js';

type Timing = Pick<ScheduleState, 'every' | 'cron' | 'tz' | 'anchor' | 'startAt' | 'endAt'>;

/** The first grid time strictly after `after`, within startAt..endAt; null when none is left. */
export function occurrenceAfter(timing: Timing, after: number): number | null {
  const from = Math.max(after, (timing.startAt ?? Number.NEGATIVE_INFINITY) - 1);
  let at: number | null;
  if (timing.every !== undefined) {
    const steps = Math.floor((from - timing.anchor) / timing.every) + 1;
    at = timing.anchor + Math.max(0, steps) * timing.every;
  } else {
    const cron = new Cron(timing.cron as string, { timezone: timing.tz, paused: true });
    at = cron.nextRun(new Date(from))?.getTime() ?? null;
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
}

/**
 * A consumer holds occurrence `at` at `now`. When a later grid time has passed already, no
 * launcher ran for a while: 'once' runs this one as the catch-up and 'skip' lets it go; either
 * way the next is the first grid time after now, so occurrences never pile up.
 */
export function step(state: Timing & Pick<ScheduleState, 'missed'>, at: number, now: number): Step {
  const following = occurrenceAfter(state, at);
  if (following === null || following > now) return { run: true, next: following };
  return { run: state.missed === 'once', next: occurrenceAfter(state, now) };
}
