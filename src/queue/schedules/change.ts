// What an upsert does to a schedule's grid, the rule the README states:
// - a change that keeps the timing (the same every, or the same cron and tz, and the same
//   startAt) keeps the grid: the waiting occurrence is replaced at its own grid time;
// - a new interval starts a grid whose first occurrence comes no sooner than the smaller of
//   the old and new intervals after the last one (and not before now);
// - a cron runs at its own times: the first after the last occurrence, from now on.
// "The last one" is the occurrence a consumer got last, or, when the pending occurrence is
// leased (it runs even though its spec changed), that one. The script learns which of the two
// holds (schedule-upsert.lua), so the caller plans both.
import { occurrenceAfter } from './next.js';
import type { ScheduleState } from './spec.js';

type Timing = Pick<ScheduleState, 'every' | 'cron' | 'tz' | 'startAt' | 'endAt'>;

export interface GridPlan {
  anchor: number;
  /** the next occurrence's grid ms; null when none is left */
  next: number | null;
}

export interface ChangePlan {
  /** when the old pending occurrence was waiting (it is replaced), or there was none */
  replaced: GridPlan;
  /** when the old pending occurrence is leased: it runs, and the new grid follows it */
  running: GridPlan;
}

const sameGrid = (old: Timing, timing: Timing): boolean =>
  old.every === timing.every &&
  old.cron === timing.cron &&
  old.tz === timing.tz &&
  old.startAt === timing.startAt;

/** A new grid after `previous` (the last occurrence; undefined for a new schedule). */
function newGrid(
  timing: Timing,
  oldEvery: number | undefined,
  previous: number | undefined,
  now: number,
): GridPlan {
  if (timing.every === undefined) {
    const after = Math.max(now - 1, previous ?? Number.NEGATIVE_INFINITY);
    return { anchor: now, next: occurrenceAfter({ ...timing, anchor: now }, after) };
  }
  const gap = oldEvery === undefined ? timing.every : Math.min(oldEvery, timing.every);
  const start = previous === undefined ? now : Math.max(now, previous + gap);
  const anchor = timing.startAt ?? start;
  return { anchor, next: occurrenceAfter({ ...timing, anchor }, start - 1) };
}

/** The grid of `timing` replacing `old` (null: a new schedule) at `now`. */
export function planChange(old: ScheduleState | null, timing: Timing, now: number): ChangePlan {
  if (!old) {
    const plan = newGrid(timing, undefined, undefined, now);
    return { replaced: plan, running: plan };
  }
  if (!sameGrid(old, timing)) {
    return {
      replaced: newGrid(timing, old.every, old.last, now),
      running: newGrid(timing, old.every, old.next ?? old.last, now),
    };
  }
  const kept = { ...timing, anchor: old.anchor };
  const grid = (next: number | null): GridPlan => ({ anchor: old.anchor, next });
  if (old.next === undefined) {
    // It had ended (limit, endAt): it goes on on its grid after the last one.
    const plan = grid(
      occurrenceAfter(kept, Math.max(now - 1, old.last ?? Number.NEGATIVE_INFINITY)),
    );
    return { replaced: plan, running: plan };
  }
  return {
    replaced: grid(occurrenceAfter(kept, old.next - 1)),
    running: grid(occurrenceAfter(kept, Math.max(old.next, now - 1))),
  };
}
