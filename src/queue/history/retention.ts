// How long finished jobs are kept (keepDone), checked once when a Queue is made.
import { errors } from '../../base/errors.js';
import { checkDuration, checkInteger, checkObject, rejectUnknown } from '../options.js';

/** How many finished jobs (or dead letters) a group keeps, and for how long. */
export interface Retention {
  /** most finished jobs kept per group (the oldest go first) */
  count: number;
  /** longest a finished job is kept, in ms (0: no age limit) */
  ageMs: number;
}

/** `false` keeps nothing (finished jobs are forgotten at once, as before history). */
export type KeepDoneOption = Partial<Retention> | false;

export const DEFAULT_KEEP_DONE: Retention = { count: 1000, ageMs: 3_600_000 };
/** Largest result kept as is; a bigger one is recorded as truncated, with its size. */
export const DEFAULT_RESULT_MAX_BYTES = 64 * 1024;

export function checkKeepDone(value: unknown): Retention | null {
  if (value === undefined) return DEFAULT_KEEP_DONE;
  if (value === false) return null;
  const {
    count = DEFAULT_KEEP_DONE.count,
    ageMs = DEFAULT_KEEP_DONE.ageMs,
    ...rest
  } = checkObject('keepDone', value);
  rejectUnknown('keepDone.', rest);
  const retention = {
    count: checkInteger('keepDone.count', count, 0, 10_000_000),
    ageMs: checkDuration('keepDone.ageMs', ageMs),
  };
  return retention.count === 0 ? null : retention;
}

/** The retention as the scripts take it: "<count>:<age ms>", '' for nothing kept. */
export function retentionArg(retention: Retention | null): string {
  return retention ? `${retention.count}:${retention.ageMs}` : '';
}

/** `skyq start --keep-done 1000,1h`: a count and an age, either may be left out ("1000", ",1h"). */
export function parseKeepDone(
  text: string,
  parseDuration: (text: string) => number,
): Retention | null {
  if (text === 'false' || text === 'off' || text === '0') return null;
  const [count, age] = text.split(',');
  const retention = {
    count: count ? Number(count) : DEFAULT_KEEP_DONE.count,
    ageMs: age ? parseDuration(age) : DEFAULT_KEEP_DONE.ageMs,
  };
  if (!Number.isInteger(retention.count) || retention.count < 0) {
    throw errors.invalidOption('keep-done', 'must be <count>[,<age>], like 1000,1h', text);
  }
  return checkKeepDone(retention);
}

/**
 * Dead letters' own retention (keepDead): a count, an age, or both; undefined or false keeps
 * them until purged (as before keepDead). 0 in either means no limit of that kind.
 */
export function checkKeepDead(value: unknown): Retention | null {
  if (value === undefined || value === false) return null;
  const { count = 0, ageMs = 0, ...rest } = checkObject('keepDead', value);
  rejectUnknown('keepDead.', rest);
  const retention = {
    count: checkInteger('keepDead.count', count, 0, 10_000_000),
    ageMs: checkDuration('keepDead.ageMs', ageMs),
  };
  return retention.count === 0 && retention.ageMs === 0 ? null : retention;
}

/** `skyq start --keep-dead 10000,7d`-like text: "<count>[,<age>]" or ",<age>"; off keeps all. */
export function parseKeepDead(
  text: string,
  parseDuration: (text: string) => number,
): Retention | null {
  if (text === 'false' || text === 'off') return null;
  const [count, age, ...more] = text.split(',');
  const retention = { count: count ? Number(count) : 0, ageMs: age ? parseDuration(age) : 0 };
  if (more.length > 0 || !Number.isInteger(retention.count) || retention.count < 0) {
    throw errors.invalidOption('keep-dead', 'must be <count>[,<age>], like 10000,24h', text);
  }
  return checkKeepDead(retention);
}
