// What a schedule will run next, computed as its consumers will (next.ts), writing nothing.
import { checkInteger, checkNearTime, checkObject, rejectUnknown } from '../options.js';
import { occurrenceAfter, step } from './next.js';
import type { CheckedSpec, ScheduleState } from './spec.js';

/** What `queue.schedules.preview()` shows: from when, and how many run times. */
export interface PreviewOptions {
  /** the first run time to show is at or after this (Date or epoch ms; default now) */
  from?: number | Date;
  /** how many run times (default 10, at most 1000) */
  count?: number;
}

const DEFAULT_COUNT = 10;
const MAX_COUNT = 1000;

/**
 * The run times of a stored schedule (from its pending occurrence on, as it ends by endAt and
 * limit) or of a checked spec (a new schedule made at `from`), `count` of them at most. A
 * stored schedule's overdue occurrence runs as consumers will run it, as soon as one takes it
 * (as the catch-up, or let go: `missed`); the times after assume consumers keep up.
 */
export async function previewOf(
  schedule: ScheduleState | CheckedSpec['state'],
  options: unknown,
  now: () => Promise<number>,
): Promise<number[]> {
  const {
    from,
    count = DEFAULT_COUNT,
    ...rest
  } = checkObject('options', options) as PreviewOptions;
  rejectUnknown('options', rest as Record<string, unknown>);
  const wanted = checkInteger('count', count, 1, MAX_COUNT);
  const start = from === undefined ? Math.round(await now()) : checkNearTime('from', from);
  const stored = 'count' in schedule ? schedule : null;
  const timing = { ...schedule, anchor: schedule.anchor ?? start };
  const limit = stored ? (stored.limit ?? Infinity) - stored.count : (schedule.limit ?? Infinity);
  let slots = limit; // occurrences the limit leaves
  const out: number[] = [];
  let at: number | null = stored ? (stored.next ?? null) : occurrenceAfter(timing, start - 1);
  if (stored && at !== null && at < start) {
    if (from !== undefined) at = occurrenceAfter(timing, start - 1);
    else {
      // Overdue: a consumer takes it as soon as one runs, as consumers do (next.ts step):
      // a catch-up or let go (missed), and the next is the first grid time after now.
      const late = step(stored, at, start);
      if (late.run && slots > 0) out.push(at);
      slots--;
      at = late.next;
    }
  }
  while (at !== null && out.length < wanted && slots > 0) {
    out.push(at);
    slots--;
    at = occurrenceAfter(timing, at);
  }
  return out;
}
