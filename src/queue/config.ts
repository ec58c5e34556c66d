// Queue-wide settings, checked once when a Queue is made.
import { errors } from '../base/errors.js';
import { type ConnectionOptions, withoutConnectionOptions } from '../redis/connection.js';
import {
  checkKeepDead,
  checkKeepDone,
  DEFAULT_RESULT_MAX_BYTES,
  type KeepDoneOption,
  type Retention,
} from './history/retention.js';
import { checkBackoff, checkInteger, checkObject, rejectUnknown } from './options.js';

function checkBoolean(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw errors.invalidOption(field, 'must be true or false', value);
  return value;
}

import type { Backoff } from './record.js';

/**
 * The unit of the delayed sets' scores: ms (skyq's own), cs or s (for sets other programs write).
 */
export type ScoreUnit = 'ms' | 'cs' | 's';
export const UNIT_MS: Record<ScoreUnit, number> = { ms: 1, cs: 10, s: 1000 };

/** What `new Queue(options)` takes: where Redis is, how the queue is laid out, and its defaults. */
export interface QueueOptions extends ConnectionOptions {
  /** key prefix; groups live at `<prefix>:<g>` (default `task_group`) */
  prefix?: string;
  /** number of groups (shards), default 10 */
  groups?: number;
  /** unit of delayed-set scores, for sets other clients also write (default 'ms') */
  scoreUnit?: ScoreUnit;
  /** largest serialised body accepted, in bytes (default 1 MiB) */
  maxBodyBytes?: number;
  /** attempts per message unless add() says otherwise (default 3) */
  attempts?: number;
  /** retry backoff unless add() says otherwise (default exponential from 1 s, at most 1 h) */
  backoff?: Backoff;
  /** the connection's name in CLIENT LIST (default skyq) */
  connectionName?: string;
  /** finished jobs kept per group, with results (default 1,000 for 1 hour; false: none) */
  keepDone?: KeepDoneOption;
  /**
   * dead letters kept per group: the newest `count`, each for at most `ageMs` (default: every
   * one until purged); trimmed a few at a time as new ones die
   */
  keepDead?: Partial<Retention> | false;
  /** largest result kept; bigger ones are recorded as truncated, with their size (64 KiB) */
  resultMaxBytes?: number;
  /** warn (once per server) when Redis's maxmemory-policy can delete messages (default true) */
  warnEviction?: boolean;
  /**
   * publish every state change to the group's event stream, for queue.events() (default
   * false). done, dead and cancelled are published either way: waitFor() needs them.
   */
  events?: boolean;
  /**
   * raise the stored data format to this skyq's when connecting (default true). false checks
   * it only: a newer skyq that reads (`skyq stats`, `get`, `list`, a dashboard) leaves older
   * launchers running; whatever it writes still raises the format of the group it writes.
   */
  raiseFormat?: boolean;
}

/** A queue's settings after checking, defaults filled in (`queue.config`). */
export interface QueueConfig {
  /** the key prefix: groups live at `<prefix>:<g>` */
  prefix: string;
  /** how many groups (shards) */
  groups: number;
  /** the unit of the delayed sets' scores */
  scoreUnit: ScoreUnit;
  /** ms per score unit (1, 10 or 1000) */
  unitMs: number;
  /** the largest body add() accepts, in bytes */
  maxBodyBytes: number;
  /** deliveries per message unless add() says otherwise */
  attempts: number;
  /** the retry backoff unless add() says otherwise */
  backoff: Backoff;
  /** null: finished jobs are forgotten at once */
  keepDone: Retention | null;
  /**
   * Reads (get, list, counts) leave out done jobs that finished longer ago than this, before the
   * next ack's trim takes them; 0 leaves none out. keepDone's age when it was given, else 0: a
   * reader not told the consumers' retention (the CLI's, a dashboard's) shows what they keep.
   */
  hideDoneAfterMs: number;
  /** null: dead letters stay until purged */
  keepDead: Retention | null;
  /** the largest result kept whole */
  resultMaxBytes: number;
  /** whether an evicting maxmemory-policy is warned about */
  warnEviction: boolean;
  /** whether every event is published (done, dead and cancelled always are) */
  events: boolean;
  /** whether connecting raises the stored data format (false: a reader only checks it) */
  raiseFormat: boolean;
}

export function queueConfig(options: unknown): QueueConfig {
  const {
    prefix = 'task_group',
    groups = 10,
    scoreUnit = 'ms',
    maxBodyBytes = 1024 * 1024,
    attempts = 3,
    backoff = { type: 'exponential', delay: 1000 },
    connectionName: _connectionName,
    keepDone,
    keepDead,
    resultMaxBytes = DEFAULT_RESULT_MAX_BYTES,
    warnEviction = true,
    events = false,
    raiseFormat = true,
    ...rest
  } = checkObject('options', options);
  rejectUnknown('', withoutConnectionOptions(rest));
  if (typeof prefix !== 'string' || !/^[^\s{}]+$/.test(prefix)) {
    throw errors.invalidOption(
      'prefix',
      'must be a non-empty string without spaces or braces',
      prefix,
    );
  }
  if (scoreUnit !== 'ms' && scoreUnit !== 'cs' && scoreUnit !== 's') {
    throw errors.invalidOption('scoreUnit', "must be 'ms', 'cs' or 's'", scoreUnit);
  }
  const retention = checkKeepDone(keepDone);
  return {
    prefix,
    groups: checkInteger('groups', groups, 1, 1024),
    scoreUnit,
    unitMs: UNIT_MS[scoreUnit],
    maxBodyBytes: checkInteger('maxBodyBytes', maxBodyBytes, 1, 512 * 1024 * 1024),
    attempts: checkInteger('attempts', attempts, 1, 1000),
    backoff: checkBackoff('backoff', backoff),
    keepDone: retention,
    hideDoneAfterMs: keepDone === undefined ? 0 : (retention?.ageMs ?? 0),
    keepDead: checkKeepDead(keepDead),
    resultMaxBytes: checkInteger('resultMaxBytes', resultMaxBytes, 0, 64 * 1024 * 1024),
    warnEviction: checkBoolean('warnEviction', warnEviction),
    events: checkBoolean('events', events),
    raiseFormat: checkBoolean('raiseFormat', raiseFormat),
  };
}
