// Durations as people write them: "5s", "250ms", "2m", "1h" (CLI flags, JSON lines, and the
// library's options that take a duration string, such as add's dedupeMs).
import { errors } from './errors.js';

export const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
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
