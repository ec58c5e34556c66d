// A schedule's spec as callers give it, checked, and the state kept in Redis beside it
// (lua/schedule-lib.lua). Every field is checked here and named when it is wrong.
import type { Cron } from 'croner';
import { MAX_DURATION_MS } from '../../base/duration.js';
import { errors } from '../../base/errors.js';
import { hashString } from '../../base/keys.js';
import type { QueueConfig } from '../config.js';
import {
  checkBackoff,
  checkGroup,
  checkId,
  checkInteger,
  checkName,
  checkNearTime,
  checkObject,
  MAX_PRIORITY,
  rejectUnknown,
} from '../options.js';
import { type Backoff, type Body, serialiseBody } from '../record.js';
import { wallCalendar } from './next.js';

/**
 * A periodic schedule for `queue.schedules.upsert(id, spec)`: exactly one of `every` and `cron`
 * (`tz` with cron only), plus what each occurrence carries.
 */
export type ScheduleSpec = ScheduleTiming & ScheduleOptions;

/** When a schedule's occurrences fall: `every` so long, or on a `cron` pattern; never both. */
export type ScheduleTiming =
  | {
      /** ms between occurrences, or a duration such as '10s' */
      every: number | string;
      /** not with every */
      cron?: never;
      /** not with every */
      tz?: never;
    }
  | {
      /** not with cron */
      every?: never;
      /** a cron pattern of 5 fields (minute first) or 6 (second first) */
      cron: string;
      /** IANA time zone the cron pattern is read in (default UTC) */
      tz?: string;
    };

/** What a schedule's occurrences carry, and its bounds. */
export interface ScheduleOptions {
  /** each occurrence's body */
  body?: Body;
  /** each occurrence's job name */
  name?: string;
  /** each occurrence's priority (0..1,000,000, lower first) */
  priority?: number;
  /** each occurrence's deliveries before it becomes a dead letter */
  attempts?: number;
  /** each occurrence's retry backoff */
  backoff?: Backoff;
  /** a key that picks the group of the schedule and its occurrences */
  key?: string;
  /** the group of the schedule and its occurrences (default: the id's home group) */
  group?: number;
  /** no occurrence before this (Date or epoch ms) */
  startAt?: number | Date;
  /** no occurrence after this */
  endAt?: number | Date;
  /** how many occurrences in all */
  limit?: number;
  /** after downtime: 'once' runs one catch-up occurrence, 'skip' waits for the next grid time */
  missed?: 'once' | 'skip';
}

/** What Redis keeps per schedule (s:<id> in the schedules hash). */
export interface ScheduleState {
  /** the schedule's id */
  id: string;
  /** the group of the schedule and its occurrences */
  group: number;
  /** ms between occurrences (every schedules) */
  every?: number;
  /** the cron pattern (cron schedules) */
  cron?: string;
  /** the time zone the cron pattern is read in */
  tz: string;
  /** each occurrence's job name */
  name?: string;
  /** each occurrence's priority */
  priority: number;
  /** after downtime: one catch-up occurrence, or none */
  missed: 'once' | 'skip';
  /** no occurrence before this (epoch ms) */
  startAt?: number;
  /** no occurrence after this (epoch ms) */
  endAt?: number;
  /** how many occurrences in all */
  limit?: number;
  /** the grid of `every` starts here (startAt, or when the spec was first upserted) */
  anchor: number;
  /** the spec's and record's fingerprint: an upsert of the same one changes nothing */
  digest: string;
  /** grid ms of the pending occurrence; absent when the schedule has ended */
  next?: number;
  /** grid ms of the last occurrence a consumer got */
  last?: number;
  /** occurrences consumers got so far */
  count: number;
  /** the placement generation it was written under (schedule-home.lua); absent before format 8 */
  gen?: number;
  /** the occurrences' body (upsert, get and list return it; not part of the stored state) */
  body?: Body;
}

/** A checked spec: its state fields (no next/last/count yet) and the record's parts. */
export interface CheckedSpec {
  state: Omit<ScheduleState, 'next' | 'last' | 'count' | 'anchor' | 'gen'> & { anchor?: number };
  /**
   * The group the spec names (by group or key); undefined when it names none: the schedule
   * stays where it is, and a new one goes to the id's home group (state.group until then).
   */
  target: { group: number; field: 'group' | 'key'; value: unknown } | undefined;
  body: { kind: string; data: string | Buffer };
  maxAttempts: number;
  backoff: Backoff;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Bodies stay in one script's reach: no spilling for occurrences. */
const MAX_SCHEDULE_BODY = 60 * 1024;

/** The group a schedule id names no group for goes to, and where its placement is kept. */
export const homeGroup = (config: Pick<QueueConfig, 'groups'>, id: string): number =>
  hashString(`schedule:${id}`) % config.groups;

export function checkScheduleId(value: unknown): string {
  const id = checkId('id', value);
  if (id.length > 200) throw errors.invalidOption('id', 'must be at most 200 characters', value);
  return id;
}

function checkEvery(value: unknown): number {
  let ms: number;
  if (typeof value === 'string') {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
    if (!match) {
      throw errors.invalidOption(
        'every',
        'must be ms or a duration like 500ms, 10s, 5m, 1h, 1d',
        value,
      );
    }
    ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  } else if (typeof value === 'number' && Number.isFinite(value)) ms = value;
  else throw errors.invalidOption('every', 'must be ms or a duration like 10s', value);
  if (ms < 100) throw errors.invalidOption('every', 'must be at least 100 ms', value);
  // As add's delay: the state keeps grid times in JSON Redis writes with 14 digits (checkNearTime).
  if (ms > MAX_DURATION_MS)
    throw errors.invalidOption('every', `must be at most 100 years (${MAX_DURATION_MS} ms)`, value);
  return Math.round(ms);
}

function checkTimeZone(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw errors.invalidOption('tz', 'must be an IANA time zone such as Europe/Berlin', value);
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
  } catch {
    throw errors.invalidOption('tz', 'is not an IANA time zone (such as Europe/Berlin)', value);
  }
  return value;
}

function checkCron(value: unknown): string {
  if (typeof value !== 'string')
    throw errors.invalidOption('cron', 'must be a pattern of 5 or 6 fields', value);
  const fields = value.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    throw errors.invalidOption('cron', `must have 5 or 6 fields, not ${fields}`, value);
  let calendar: Cron;
  try {
    calendar = wallCalendar(value.trim());
  } catch (error) {
    throw errors.invalidOption('cron', (error as Error).message, value);
  }
  // Wall times are looked for in UTC (next.ts): a time a zone skips still runs, after the jump.
  if (calendar.nextRun() === null)
    throw errors.invalidOption('cron', 'never runs: no date matches it', value);
  return value.trim();
}

export function checkSpec(config: QueueConfig, id: string, spec: unknown): CheckedSpec {
  const {
    every,
    cron,
    tz,
    body = null,
    name,
    priority = 0,
    attempts,
    backoff,
    key,
    group,
    startAt,
    endAt,
    limit,
    missed = 'once',
    ...rest
  } = checkObject('spec', spec) as ScheduleSpec & Record<string, unknown>;
  rejectUnknown('', rest);
  if ((every === undefined) === (cron === undefined))
    throw errors.invalidOption('every', 'give exactly one of every and cron');
  const zone = tz === undefined ? 'UTC' : checkTimeZone(tz);
  if (every !== undefined && tz !== undefined)
    throw errors.invalidOption('tz', 'goes with cron, not every');
  let target: CheckedSpec['target'];
  if (group !== undefined) {
    target = { group: checkGroup('group', group, config.groups), field: 'group', value: group };
  } else if (key !== undefined) {
    if (typeof key !== 'string' || key.length === 0)
      throw errors.invalidOption('key', 'must be a non-empty string', key);
    target = { group: hashString(key) % config.groups, field: 'key', value: key };
  }
  if (missed !== 'once' && missed !== 'skip')
    throw errors.invalidOption('missed', "must be 'once' or 'skip'", missed);
  const stored = serialiseBody(body);
  if (stored.bytes > MAX_SCHEDULE_BODY)
    throw errors.body('body', `is ${stored.bytes} bytes, over ${MAX_SCHEDULE_BODY} for a schedule`);
  const state: CheckedSpec['state'] = {
    id,
    group: target?.group ?? homeGroup(config, id),
    tz: zone,
    priority: checkInteger('priority', priority, 0, MAX_PRIORITY),
    missed,
    digest: '',
  };
  if (every !== undefined) state.every = checkEvery(every);
  else state.cron = checkCron(cron);
  if (name !== undefined) state.name = checkName('name', name);
  if (startAt !== undefined) state.startAt = checkNearTime('startAt', startAt);
  if (endAt !== undefined) state.endAt = checkNearTime('endAt', endAt);
  if (state.startAt !== undefined && state.endAt !== undefined && state.endAt < state.startAt)
    throw errors.invalidOption('endAt', 'must not be before startAt', endAt);
  if (limit !== undefined) state.limit = checkInteger('limit', limit, 1, Number.MAX_SAFE_INTEGER);
  if (state.startAt !== undefined) state.anchor = state.startAt;
  return {
    state,
    target,
    body: { kind: stored.kind, data: stored.data },
    maxAttempts:
      attempts === undefined ? config.attempts : checkInteger('attempts', attempts, 1, 1000),
    backoff: backoff === undefined ? config.backoff : checkBackoff('backoff', backoff),
  };
}
