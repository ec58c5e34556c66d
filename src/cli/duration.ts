// Parsers for the values CLI flags take: durations ("5s", "250ms", "2m", "1h"),
// whole numbers, group lists ("0,3,7") and points in time (ISO or epoch ms).
import { errors } from '../base/errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNIT_HINT = 'expected a duration with a unit: 500ms, 5s, 2m or 1h';
/** The library's own ceiling for a delay (100 years); past it a number stops being a time. */
export const MAX_DURATION_MS = 100 * 365 * 24 * 3_600_000;

/**
 * A duration with its unit. A bare number is refused (is `--delay 5` five seconds, as in
 * the original producer, or five milliseconds?), except 0, which means the same in any unit.
 */
export function parseDuration(text: string, field = 'duration', maxMs = MAX_DURATION_MS): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw errors.invalidOption(field, UNIT_HINT, text);
  const [, amount, unit] = match as unknown as [string, string, string | undefined];
  if (unit === undefined && Number(amount) !== 0)
    throw errors.invalidOption(field, UNIT_HINT, text);
  const ms = Math.round(Number(amount) * (UNITS[unit ?? 'ms'] as number));
  if (ms > maxMs) throw errors.invalidOption(field, `must be at most ${describeMs(maxMs)}`, text);
  return ms;
}

/** 86400000 → "24h", 1500 → "1500ms": the largest unit that divides it. */
export function describeMs(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const) {
    const size = UNITS[unit] as number;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

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

/** `--at`: epoch milliseconds (digits only) or an ISO 8601 time (local time unless it has Z or an offset). */
export function parseTime(text: string, field = 'at'): number {
  const trimmed = text.trim();
  const ms = /^\d+$/.test(trimmed)
    ? Number(trimmed)
    : /^\d{4}-\d\d-\d\d/.test(trimmed)
      ? Date.parse(trimmed)
      : Number.NaN;
  if (!Number.isFinite(ms) || ms > Date.now() + MAX_DURATION_MS)
    throw errors.invalidOption(
      field,
      'expected an ISO time (2030-01-31T09:00:00Z) or epoch milliseconds',
      text,
    );
  return ms;
}
