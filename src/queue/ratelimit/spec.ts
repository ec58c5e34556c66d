// What a rate limit is: at most `max` messages started per `perMs`, for the whole queue
// (every launcher on the same Redis and prefix shares it) and, optionally, per job name.
// Given as `{ max, perMs }`, as `{ 'email.send': { max, perMs }, '*': { max, perMs } }`
// ('*' = the whole queue), or both at once; on the CLI as `100/s`, `50/100ms`, `6000/min`,
// `email.send=10/s`.
import { errors } from '../../base/errors.js';
import { checkInteger, checkName } from '../options.js';

/** At most `max` starts per `perMs` milliseconds. */
export interface Rate {
  /** most starts in a window */
  max: number;
  /** the window, in ms */
  perMs: number;
}

export interface RateLimitSpec {
  /** the whole queue's limit, when there is one */
  all: Rate | null;
  /** per job name */
  names: Record<string, Rate>;
}

/** What startActors() takes. */
export type RateLimitOption = Partial<Rate> & { [name: string]: Rate | number | undefined };

/** The name of the whole queue's bucket: no job name can be '*' alone and mean anything else. */
export const ALL = '*';
const MAX_PER_MS = 24 * 3_600_000;
const MAX_NAMES = 100;

/**
 * Most tokens a bucket saves up: a tenth of max (at least 1). Any window of perMs then sees at
 * most 1.1 × max starts, where a full-size bucket would allow 2 × max after a quiet spell.
 */
export const capOf = (rate: Rate): number => Math.max(1, Math.ceil(rate.max / 10));

function checkRate(field: string, value: unknown): Rate {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw errors.invalidOption(field, 'must be { max, perMs }', value);
  const { max, perMs, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw errors.invalidOption(`${field}.${unknown[0]}`, 'is not a rate-limit field (max, perMs)');
  return {
    max: checkInteger(`${field}.max`, max, 1, 1_000_000_000),
    perMs: checkInteger(`${field}.perMs`, perMs, 1, MAX_PER_MS),
  };
}

/** Checks startActors()'s `rateLimit`; null when none. */
export function checkRateLimit(value: unknown): RateLimitSpec | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw errors.invalidOption('rateLimit', 'must be { max, perMs } or { name: { max, perMs } }');
  const { max, perMs, ...named } = value as Record<string, unknown>;
  const spec: RateLimitSpec = { all: null, names: {} };
  if (max !== undefined || perMs !== undefined) spec.all = checkRate('rateLimit', { max, perMs });
  for (const [name, rate] of Object.entries(named)) {
    if (name === ALL) {
      if (spec.all)
        throw errors.invalidOption(
          'rateLimit',
          "gives the whole-queue limit twice ('*' and max/perMs)",
        );
      spec.all = checkRate("rateLimit['*']", rate);
      continue;
    }
    checkName(`rateLimit name ${JSON.stringify(name)}`, name);
    spec.names[name] = checkRate(`rateLimit[${JSON.stringify(name)}]`, rate);
  }
  if (Object.keys(spec.names).length > MAX_NAMES)
    throw errors.invalidOption('rateLimit', `names at most ${MAX_NAMES} job names`);
  if (!spec.all && Object.keys(spec.names).length === 0)
    throw errors.invalidOption('rateLimit', 'names no limit');
  return spec;
}

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
};

/**
 * `100/s`, `50/100ms`, `6000/min`, `5/2s`, and `email.send=10/s` for one name; several flags
 * add up into one rateLimit option. Throws a one-line error naming the bad text.
 */
export function parseRateLimit(texts: readonly string[]): RateLimitOption {
  const option: RateLimitOption = {};
  for (const text of texts) {
    const equals = text.lastIndexOf('=');
    const name = equals >= 0 ? text.slice(0, equals) : ALL;
    const rate = rateOf(text.slice(equals + 1), text);
    if (option[name] !== undefined)
      throw errors.invalidOption(
        'rate-limit',
        `gives ${name === ALL ? 'the whole-queue limit' : `"${name}"`} twice`,
        text,
      );
    option[name] = rate;
  }
  return option;
}

function rateOf(text: string, whole: string): Rate {
  const match = /^\s*(\d+)\s*\/\s*(\d*(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(text);
  const unit = match ? UNITS[(match[3] as string).toLowerCase()] : undefined;
  if (!match || unit === undefined)
    throw errors.invalidOption(
      'rate-limit',
      'must be like 100/s, 50/100ms, 6000/min or NAME=10/s',
      whole,
    );
  const count = match[2] === '' ? 1 : Number(match[2]);
  const perMs = Math.round(count * unit);
  const max = Number(match[1]);
  if (!(max >= 1) || !(perMs >= 1))
    throw errors.invalidOption('rate-limit', 'needs at least 1 message per at least 1 ms', whole);
  return { max, perMs };
}

/** `100/s`, `6000/min`, `50/100ms`: a rate as the CLI takes it. */
export function describeRate({ max, perMs }: Rate): string {
  const unit = perMs === 1000 ? 's' : perMs === 60_000 ? 'min' : perMs === 3_600_000 ? 'h' : null;
  return unit ? `${max}/${unit}` : `${max}/${perMs}ms`;
}

/** One line for a launcher's start: every limit it keeps to. */
export function describeRateLimit(spec: RateLimitSpec): string {
  const parts = spec.all ? [`${describeRate(spec.all)} for the whole queue`] : [];
  for (const [name, rate] of Object.entries(spec.names))
    parts.push(`${describeRate(rate)} for ${name}`);
  return parts.join(', ');
}
