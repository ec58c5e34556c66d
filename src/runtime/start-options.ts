// What the runtime's launchActors() accepts, checked once before any thread starts, and
// turned into the settings each part of the runtime gets.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errors } from '../base/errors.js';
import { type QueueConfig, type QueueOptions, queueConfig } from '../queue/config.js';
import { checkIntake, type IntakeListOption, type IntakeSpec } from '../queue/intake/spec.js';
import {
  checkZsetIntake,
  type ZsetIntakeOption,
  type ZsetIntakeSpec,
} from '../queue/intake/zset-spec.js';
import { checkDuration, checkGroup, checkInteger } from '../queue/options.js';
import { checkRateLimit, type RateLimitOption } from '../queue/ratelimit/spec.js';
import { withDefaultRedis } from '../redis/connection-options.js';
import { CHORES_MS } from './actor-rounds.js';
import type { ActorSettings } from './actor-types.js';
import { handlerUrl } from './handler.js';
import { beatEveryMs } from './hang-watch.js';
import type { KeyspaceMode } from './keyspace.js';
import { DEFAULT_LOG_DIR } from './log-names.js';
import { DEFAULT_ACTOR_NICE } from './thread-priority.js';
import type { WatchSettings } from './watcher.js';

/** What the actor runtime takes; src/start.ts adds the HTTP server on top. */
export interface RuntimeOptions extends QueueOptions {
  /** run actors for these groups only (default: all) */
  only?: number[];
  /** messages an actor holds at once, running or leased ahead of their due time (default 100) */
  concurrency?: number;
  /** most messages one poll leases (default 200) */
  batch?: number;
  /** lease length, renewed while a handler runs (default 30 s) */
  leaseMs?: number;
  /** fail a handler that runs longer than this (default 10 minutes; 0: no limit) */
  timeoutMs?: number;
  /** lease messages due within this window and start them on a local timer (default 250 ms) */
  lookaheadMs?: number;
  /**
   * nice steps each actor thread lowers its own priority by, so that a producer in the same
   * process keeps the cores it needs (Linux only; default 10; 0: the launcher's priority)
   */
  actorNice?: number;
  /** handler module path; default: log each message as consumed */
  handler?: string;
  /** run the handler module on a piscina pool of this many threads (default 0: in the actor) */
  pool?: number;
  /** where the actors' JSON-lines logs go (default ./logs) */
  logDir?: string;
  /** trace, debug, info (default), warn, error, fatal or silent */
  logLevel?: string;
  /** how long graceful shutdown waits for running handlers (default 10 s) */
  graceMs?: number;
  /** publish live figures to Redis for `skyq stats` (default true) */
  publishStats?: boolean;
  /** start the actors without claiming until resume() */
  paused?: boolean;
  /** an actor whose event loop gives no heartbeat this long is ended and restarted (default 30 s) */
  hangTimeoutMs?: number;
  /** how often idle groups are checked for work nobody announced (default 50 ms; 0 = never) */
  watchMs?: number;
  /** keyspace notifications for foreign ZADDs: 'auto' (use when on), 'enable', 'off' */
  keyspaceEvents?: KeyspaceMode;
  /**
   * run even where Redis's maxmemory-policy can delete queued messages (allkeys-*): a loud
   * warning instead of a refusal (default false)
   */
  allowEviction?: boolean;
  /** the clock each server's TIME is compared with (default Date.now; tests skew it) */
  wallClock?: () => number;
  /**
   * classic LPUSH/BRPOP lists whose items become messages, earliest list first (as
   * `BRPOP high normal low` takes them): names, or { list, group, priority }
   */
  intake?: (string | IntakeListOption)[];
  /**
   * sorted sets other programs use as their delay queue (`ZADD key <due> <member>`), consumed
   * where they lie: each member becomes a message when it falls due on Redis's clock, its score
   * read in `scoreUnit` ('s', 'cs' or 'ms'): [{ key, scoreUnit, group?, priority? }]
   */
  zsetIntake?: ZsetIntakeOption[];
  /**
   * at most `max` messages started per `perMs`, shared by every launcher on the same Redis and
   * prefix; per job name too: `{ 'email.send': { max, perMs } }` ('*' = the whole queue)
   */
  rateLimit?: RateLimitOption;
}

export const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/**
 * How far ahead an idle actor leases what is about to fall due. Longer means fewer claims for a
 * trickle of due times; the cost is that a message leased ahead can no longer be cancelled.
 */
export const DEFAULT_LOOKAHEAD_MS = 250;

/** Everything startActors() needs, checked. */
export interface StartPlan {
  config: QueueConfig;
  queue: QueueOptions;
  groups: number[];
  actor: Omit<ActorSettings, 'group' | 'paused'>;
  /** nice steps below the launcher's priority for each actor thread */
  actorNice: number;
  handlerUrl: string | null;
  poolSize: number;
  logDir: string;
  logLevel: string;
  graceMs: number;
  hangTimeoutMs: number;
  publish: boolean;
  watch: WatchSettings;
  allowEviction: boolean;
  wallClock: () => number;
  intake: IntakeSpec[];
  zsetIntake: ZsetIntakeSpec[];
}

export function planStart(options: RuntimeOptions): StartPlan {
  if (options.connection) {
    throw errors.invalidOption(
      'connection',
      'actors make their own connections: give redis, cluster or sentinel',
    );
  }
  const queue = queueOptionsOf(options);
  const config = queueConfig(queue);
  const groups = options.only
    ? [...new Set(options.only.map((g) => checkGroup('only', g, config.groups)))].sort(
        (a, b) => a - b,
      )
    : Array.from({ length: config.groups }, (_, g) => g);
  if (groups.length === 0) throw errors.invalidOption('only', 'names no group');
  const leaseMs = checkDuration('leaseMs', options.leaseMs ?? 30_000);
  if (leaseMs < 100) throw errors.invalidOption('leaseMs', 'must be at least 100 ms', leaseMs);
  // No handler ('' and null too, as before): the default one, which logs each message.
  const named = options.handler ?? '';
  const url = named === '' ? null : handlerUrl(checkHandlerPath(named));
  const poolSize = checkInteger('pool', options.pool ?? 0, 0, 256);
  if (poolSize > 0 && !url)
    throw errors.invalidOption('pool', 'needs a handler module (--handler)');
  const rateLimit = checkRateLimit(options.rateLimit);
  const intake = checkIntake(options.intake, config.groups, config.prefix);
  const keyspaceEvents = options.keyspaceEvents ?? 'auto';
  if (!['auto', 'enable', 'off'].includes(keyspaceEvents)) {
    throw errors.invalidOption(
      'keyspaceEvents',
      "must be 'auto', 'enable' or 'off'",
      keyspaceEvents,
    );
  }
  const hangTimeoutMs = checkDuration('hangTimeoutMs', options.hangTimeoutMs ?? 30_000);
  return {
    config,
    queue,
    groups,
    actor: {
      concurrency: checkInteger('concurrency', options.concurrency ?? 100, 1, 100_000),
      batch: checkInteger('batch', options.batch ?? 200, 1, 10_000),
      leaseMs,
      timeoutMs: checkDuration('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      // A message leased ahead must not see its lease run out before it is due. With a rate
      // limit, none is: its token would be spent up to a lookahead before it starts.
      lookaheadMs: rateLimit
        ? 0
        : Math.min(
            checkDuration('lookaheadMs', options.lookaheadMs ?? DEFAULT_LOOKAHEAD_MS, 1000),
            Math.floor(leaseMs / 2),
          ),
      rateLimit,
      beatMs: hangTimeoutMs > 0 ? beatEveryMs(hangTimeoutMs) : CHORES_MS,
    },
    actorNice: checkInteger('actorNice', options.actorNice ?? DEFAULT_ACTOR_NICE, 0, 19),
    handlerUrl: url,
    poolSize,
    logDir: options.logDir ?? DEFAULT_LOG_DIR,
    logLevel: options.logLevel ?? 'info',
    graceMs: checkDuration('graceMs', options.graceMs ?? 10_000),
    hangTimeoutMs,
    publish: options.publishStats !== false,
    watch: { intervalMs: checkDuration('watchMs', options.watchMs ?? 50, 60_000), keyspaceEvents },
    allowEviction: checkBoolean('allowEviction', options.allowEviction),
    wallClock: checkClock(options.wallClock),
    intake,
    zsetIntake: checkZsetIntake(
      options.zsetIntake,
      config.groups,
      config.prefix,
      intake.map((spec) => spec.list),
    ),
  };
}

function checkBoolean(field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw errors.invalidOption(field, 'must be true or false', value);
  return value;
}

function checkClock(value: unknown): () => number {
  if (value === undefined) return Date.now;
  if (typeof value !== 'function')
    throw errors.invalidOption('wallClock', 'must be a function', value);
  return value as () => number;
}

/**
 * The Queue options a launcher passes on to its actors' and coordinator's queues; the others
 * (connectionName, autoPipelining, warnEviction, failFast) each thread sets for itself.
 */
const QUEUE_OPTION_NAMES = [
  'redis',
  'cluster',
  'sentinel',
  'tls',
  'prefix',
  'groups',
  'scoreUnit',
  'maxBodyBytes',
  'attempts',
  'backoff',
  'keepDone',
  'keepDead',
  'resultMaxBytes',
  'events',
] as const satisfies readonly (keyof QueueOptions & keyof RuntimeOptions)[];

function queueOptionsOf(options: RuntimeOptions): QueueOptions {
  const picked: Record<string, unknown> = {};
  for (const name of QUEUE_OPTION_NAMES) {
    if (options[name] !== undefined) picked[name] = options[name];
  }
  // Resolved once, here: every thread then uses the same server (default-redis.ts).
  return withDefaultRedis(picked as QueueOptions);
}

/** Actors run in worker threads, which take code by module path: a function cannot travel. */
function checkHandlerPath(handler: unknown): string {
  if (typeof handler === 'function') {
    throw errors.invalidOption(
      'handler',
      "must be a module path, not a function: actors run in worker threads, so put the function in a module's default export and pass its path",
    );
  }
  if (typeof handler !== 'string') {
    throw errors.invalidOption('handler', 'must be a module path', handler);
  }
  // Said before any thread starts (or the CLI starts a server), not by each actor in turn.
  const path = fileURLToPath(handlerUrl(handler));
  if (!existsSync(path)) throw errors.invalidOption('handler', `no such file: ${path}`);
  return handler;
}
