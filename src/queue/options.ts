// Validation of everything a caller passes in. Each check names the field, so
// `add(body, { delay: -1 })` rejects with "delay: must be ≥ 0 (got -1)".
import { MAX_DURATION_MS } from '../base/duration.js';
import { errors } from '../base/errors.js';
import { GENERATED_ID } from '../base/keys.js';
import type { Backoff } from './record.js';

export const MAX_PRIORITY = 1_000_000;
export const MAX_ID_LENGTH = 256;
const MAX_DELAY_MS = MAX_DURATION_MS;

export function checkInteger(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw errors.invalidOption(field, 'must be an integer', value);
  }
  if (value < min || value > max) {
    // No one reads 9007199254740991 as "no upper bound": say only the bound that holds.
    const range = max >= Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
    throw errors.invalidOption(field, `must be ${range}`, value);
  }
  return value;
}

export function checkDuration(field: string, value: unknown, max = MAX_DELAY_MS): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw errors.invalidOption(field, 'must be a finite number of milliseconds', value);
  }
  if (value < 0) throw errors.invalidOption(field, 'must be ≥ 0', value);
  if (value > max) throw errors.invalidOption(field, `must be ≤ ${max}`, value);
  return Math.round(value);
}

export function checkEpochMs(field: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw errors.invalidOption(field, 'must be a Date or epoch milliseconds ≥ 0', value);
  }
  return Math.round(ms);
}

/**
 * A time a schedule keeps (startAt, endAt) or starts from: no further ahead than a delay may
 * be. Redis's cjson writes numbers with 14 significant digits, so a time past that came back
 * from the stored state a few ms off.
 */
export function checkNearTime(field: string, value: unknown): number {
  const ms = checkEpochMs(field, value);
  if (ms > Date.now() + MAX_DELAY_MS)
    throw errors.invalidOption(field, 'must be at most 100 years from now', value);
  return ms;
}

/** A caller's own id for a new message: printable, and not of the generated form. */
export function checkId(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw errors.invalidOption(field, 'must be a non-empty string', value);
  }
  if (GENERATED_ID.test(value)) {
    throw errors.invalidOption(
      field,
      'ids of the form <group>:<letter a–k><base36 digits> are reserved for generated ids',
      value,
    );
  }
  if (value.length > MAX_ID_LENGTH) {
    throw errors.invalidOption(field, `must be at most ${MAX_ID_LENGTH} characters`, value);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\s\u0000-\u001f\u007f]/.test(value)) {
    throw errors.invalidOption(field, 'must not contain spaces or control characters', value);
  }
  return value;
}

export const MAX_NAME_BYTES = 128;

/** A job's name: short printable text (no control characters), up to MAX_NAME_BYTES bytes. */
export function checkName(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw errors.invalidOption(field, 'must be a non-empty string', value);
  }
  if (Buffer.byteLength(value) > MAX_NAME_BYTES) {
    throw errors.invalidOption(field, `must be at most ${MAX_NAME_BYTES} bytes`, value);
  }
  if (
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value) ||
    Buffer.from(value).toString() !== value
  ) {
    throw errors.invalidOption(
      field,
      'must be printable text (no control characters or lone surrogates)',
      value,
    );
  }
  return value;
}

/** An id to look up (get, cancel, …): any member Redis can store, as text or exact bytes. */
export function checkLookupId(field: string, value: unknown): string | Buffer {
  if (typeof value !== 'string' && !Buffer.isBuffer(value)) {
    throw errors.invalidOption(field, 'must be a string or a Buffer', value);
  }
  return value;
}

export function checkGroup(field: string, value: unknown, groups: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= groups) {
    throw errors.invalidOption(field, `must be a group number from 0 to ${groups - 1}`, value);
  }
  return value;
}

export function checkBackoff(field: string, value: unknown): Backoff {
  if (typeof value !== 'object' || value === null) {
    throw errors.invalidOption(
      field,
      "must be { type: 'fixed' | 'exponential', delay: ms, max?: ms }",
      value,
    );
  }
  const { type, delay, max, ...rest } = value as Record<string, unknown>;
  rejectUnknown(field, rest);
  if (type !== 'fixed' && type !== 'exponential') {
    throw errors.invalidOption(`${field}.type`, "must be 'fixed' or 'exponential'", type);
  }
  const backoff: Backoff = { type, delay: checkDuration(`${field}.delay`, delay) };
  if (max !== undefined) backoff.max = checkDuration(`${field}.max`, max);
  return backoff;
}

/** Unknown option names are typos more often than not: say so. */
export function rejectUnknown(field: string, rest: Record<string, unknown>): void {
  const names = Object.keys(rest).filter((name) => rest[name] !== undefined);
  if (names.length > 0) {
    const where = field ? `${field}: ` : '';
    throw errors.invalidOption(names.join(', '), `${where}unknown option`);
  }
}

export function checkObject(field: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.invalidOption(field, 'must be an object', value);
  }
  return value as Record<string, unknown>;
}
