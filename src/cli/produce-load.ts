// `skyq produce --count N --spread 2s`: generated load. Message i is due at a uniform random
// point of the i-th of N equal slices of the spread: as uniform as N independent draws, but
// made in due order, so what falls due first is in Redis first. The adds follow the spread as
// a live producer's do: message i goes in about i·spread/N after the start, due LEAD_MS and
// --delay after that, in calls that grow from a few dozen messages to what 50 ms of the spread
// holds. (The first call too: when the first were due at the start, they went in after it,
// made by a process whose code was not compiled yet, and were the run's latest starts.)
// Added all at once, the whole spread's adds take the cores while the first messages fall
// due, and their lateness measures the producer's burst; --at-once does exactly that (a drain
// test, or a long spread filled now).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../base/errors.js';
import type { AddOptions } from '../queue/add-options.js';
import type { Queue } from '../queue/queue.js';
import { describeMs, parseCount, parseDuration } from './duration.js';

export interface LoadFlags {
  count?: string;
  spread?: string;
  bodyBytes?: string;
  atOnce?: boolean;
}

export interface Load {
  count: number;
  spreadMs: number;
  bodyBytes: number;
  atOnce: boolean;
}

const DEFAULT_SPREAD = '5s';
const DEFAULT_BODY_BYTES = '100';
/**
 * --count is a load generator: due times spread over more than a day test nothing a
 * shorter spread does not, and the bound keeps a slip ("--spread 5000h") from parking
 * a million messages for months.
 */
export const MAX_SPREAD_MS = 24 * 3_600_000;
const FIRST_CHUNK = 50;
const LOAD_CHUNK = 1_000;
/** The most of the spread one call covers, paced. */
const CALL_SPAN_MS = 50;
/** Each call goes this long before its first message is due: its own time and a claim fit in it. */
const LEAD_MS = 100;
/** A paced run longer than this says first how long it will take. */
const SAY_PACE_MS = 10_000;

export const LOAD_HELP = {
  spread: `with --count: due times spread over delay..delay+spread, from 0.1 s on when paced (default ${DEFAULT_SPREAD}, at most ${describeMs(MAX_SPREAD_MS)})`,
  bodyBytes: `with --count: body size (default ${DEFAULT_BODY_BYTES})`,
  atOnce:
    'with --count: add them all now, as fast as Redis takes them (default: over the spread, as they fall due)',
};

/** The load --count asks for, checked; null without --count (its companions then refused). */
export function loadOf(flags: LoadFlags): Load | null {
  if (flags.count === undefined) {
    // Given alone, they would be ignored without a word.
    for (const [flag, value] of [
      ['spread', flags.spread],
      ['body-bytes', flags.bodyBytes],
      ['at-once', flags.atOnce],
    ] as const) {
      if (value !== undefined)
        throw errors.invalidOption(
          flag,
          'only goes with --count (it shapes the generated messages; lines from stdin take --delay)',
        );
    }
    return null;
  }
  return {
    count: parseCount(flags.count, 'count'),
    spreadMs: parseDuration(flags.spread ?? DEFAULT_SPREAD, 'spread', MAX_SPREAD_MS),
    bodyBytes: parseCount(flags.bodyBytes ?? DEFAULT_BODY_BYTES, 'body-bytes'),
    atOnce: flags.atOnce === true,
  };
}

export async function produceLoad(
  queue: Queue,
  load: Load,
  common: AddOptions,
  quiet: boolean,
): Promise<void> {
  const body = 'x'.repeat(load.bodyBytes);
  const started = performance.now();
  // Due times on Redis's clock, like every due time the queue computes.
  // The CLI parsed --delay to ms: it is a number here.
  const redisStart = await queue.clock(0).now();
  const read = performance.now();
  const redisNow = () => redisStart + (performance.now() - read);
  const delay = Number(common.delay ?? 0);
  const { delay: _delay, ...rest } = common;
  const slice = load.count > 0 ? load.spreadMs / load.count : 0;
  const paced = !load.atOnce && slice > 0;
  // Paced, the first call goes LEAD_MS before its first message is due, as every other call.
  const origin = redisStart + (paced ? LEAD_MS : 0);
  if (paced && !quiet && load.spreadMs > SAY_PACE_MS) {
    console.log(
      `adding over ${describeMs(load.spreadMs)}, as they fall due (--at-once adds them all now)`,
    );
  }
  // Paced, a call covers at most CALL_SPAN_MS of the spread, so the adds follow it closely.
  const perCall = paced
    ? Math.max(1, Math.min(LOAD_CHUNK, Math.floor(CALL_SPAN_MS / slice)))
    : LOAD_CHUNK;
  let chunk = Math.min(FIRST_CHUNK, perCall);
  for (let done = 0; done < load.count; done += chunk, chunk = Math.min(perCall, chunk * 2)) {
    const size = Math.min(chunk, load.count - done);
    const sendAt = origin + done * slice - LEAD_MS;
    if (paced && sendAt > redisNow()) await sleep(sendAt - redisNow());
    const items = Array.from({ length: size }, (_, k) => ({
      body,
      options: { ...rest, runAt: origin + delay + (done + k + Math.random()) * slice },
    }));
    await queue.addBulk(items);
  }
  if (quiet) return;
  const seconds = (performance.now() - started) / 1000;
  const rate = load.count > 0 && seconds > 0 ? ` (${Math.round(load.count / seconds)}/s)` : '';
  const how = load.atOnce ? 'at once' : 'added over the spread';
  console.log(
    `added ${load.count} messages in ${seconds.toFixed(2)} s${rate}, due over ${describeMs(load.spreadMs)}, ${how}`,
  );
}
