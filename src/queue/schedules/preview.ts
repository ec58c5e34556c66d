// What a schedule will run next, computed as its consumers will (next.ts), writing nothing.
import { checkEpochMs, checkInteger, checkObject, rejectUnknown } from '../options.js';
import { occurrenceAfter } from './next.js';
import type { CheckedSpec, ScheduleState } from './spec.js';

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
 * stored schedule's times assume its consumers keep up (downtime is what `missed` decides).
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
  const start = from === undefined ? Math.round(await now()) : checkEpochMs('from', from);
  const stored = 'count' in schedule ? schedule : null;
  const timing = { ...schedule, anchor: schedule.anchor ?? start };
  let left = wanted;
  let at: number | null;
  if (stored) {
    if (stored.limit !== undefined) left = Math.min(left, stored.limit - stored.count);
    // The pending occurrence first, even when overdue (it runs once a launcher takes it).
    at = stored.next === undefined ? null : stored.next;
    if (at !== null && from !== undefined && at < start) at = occurrenceAfter(timing, start - 1);
  } else {
    if (schedule.limit !== undefined) left = Math.min(left, schedule.limit);
    at = occurrenceAfter(timing, start - 1);
  }
  const out: number[] = [];
  while (at !== null && out.length < left) {
    out.push(at);
    at = occurrenceAfter(timing, at);
  }
  return out;
}
