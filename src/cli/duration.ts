// Parsers for the values CLI flags take: durations ("5s", "250ms", "2m", "1h"),
// whole numbers, group lists ("0,3,7") and points in time (ISO or epoch ms).

import { MAX_DURATION_MS } from '../base/duration.js';
import { errors } from '../base/errors.js';

export { describeMs, MAX_DURATION_MS, parseDuration } from '../base/duration.js';

/** A whole number ≥ 1: a count of things that must run at all (handlers at once, a batch). */
export function parsePositiveCount(text: string, field: string): number {
  const value = parseCount(text, field);
  if (value < 1) throw errors.invalidOption(field, 'must be at least 1', text);
  return value;
}

export function parseCount(text: string, field: string): number {
  const value = Number(text.replace(/_/g, ''));
  if (text.trim() === '' || !Number.isInteger(value) || value < 0)
    throw errors.invalidOption(field, 'expected a whole number ≥ 0', text);
  return value;
}

/** "0,3,7": at least one group, every part a whole number (",", "1,,2", "1-3" are refused). */
export function parseGroupList(text: string, field = 'only'): number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part)))
    throw errors.invalidOption(
      field,
      'expected group numbers separated by commas, e.g. 0,3,7',
      text,
    );
  return parts.map(Number);
}

/** A point in time read from a flag, and whether it was read as this machine's local time. */
export interface ReadTime {
  ms: number;
  /** no Z or offset was given: the text was read in the local zone (TZ) */
  local: boolean;
}

/** `--at` and the like, in epoch ms (see readTime). */
export function parseTime(text: string, field = 'at'): number {
  return readTime(text, field).ms;
}

/**
 * `--at`: epoch milliseconds (digits only) or an ISO 8601 date or time: local time unless it has
 * Z or an offset (a date alone too, which Date.parse would read as UTC).
 */
export function readTime(text: string, field = 'at'): ReadTime {
  const trimmed = text.trim();
  const iso = /^\d{4}-\d\d-\d\d(T.*)?$/.exec(trimmed);
  const local = iso !== null && !/(Z|[+-]\d\d(:?\d\d)?)$/i.test(iso[1] ?? '');
  const ms = /^\d+$/.test(trimmed)
    ? Number(trimmed)
    : iso
      ? Date.parse(iso[1] === undefined ? `${trimmed}T00:00` : trimmed)
      : Number.NaN;
  if (!Number.isFinite(ms) || ms > Date.now() + MAX_DURATION_MS)
    throw errors.invalidOption(
      field,
      'expected an ISO time (2030-01-31T09:00:00Z) or epoch milliseconds',
      text,
    );
  // Date.parse rolls a day the month lacks into the next month (02-30 → 03-02); the time part
  // it checks itself (25:00 and 09:60 are NaN).
  const [year, month, day] = trimmed.slice(0, 10).split('-').map(Number) as number[];
  if (iso && (day as number) > daysIn(year as number, month as number))
    throw errors.invalidOption(field, `${trimmed.slice(0, 7)} has no day ${day}`, text);
  return { ms, local };
}

/** Days in month 1..12 of a (proleptic Gregorian) year. */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
