// "5s", "250ms", "2m", "1h" or a plain number of milliseconds.
import { errors } from '../errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string, field = 'duration'): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match)
    throw errors.invalidOption(field, 'expected a duration like 500ms, 5s, 2m or 1h', text);
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 'ms'] as number));
}

export function parseCount(text: string, field: string): number {
  const value = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(value) || value < 0)
    throw errors.invalidOption(field, 'expected a whole number ≥ 0', text);
  return value;
}

export function parseGroupList(text: string, field = 'only'): number[] {
  return text.split(',').map((part) => parseCount(part.trim(), field));
}
