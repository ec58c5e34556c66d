// Turns add(body, options) into the arguments of add.lua for one message.

import { parseDuration } from '../base/duration.js';
import { errors } from '../base/errors.js';
import { hashString, homeGroup } from '../base/keys.js';
import type { QueueConfig } from './config.js';
import {
  checkBackoff,
  checkDuration,
  checkGroup,
  checkId,
  checkInteger,
  checkName,
  checkNearTime,
  checkObject,
  MAX_PRIORITY,
  rejectUnknown,
} from './options.js';
import { type Backoff, headerOf, recordOf, serialiseBody, tagsOf } from './record.js';
import { SPILL_BYTES, type Spill, spill } from './spill.js';

/**
 * When a message is due: `delay` from now, or at `runAt`; never both (default: at once). A
 * delay is ms or a duration such as '5s', '250ms', '2m', '1h'.
 */
export type Due =
  | {
      /** how long from now: ms, or a duration such as '5s' (default 0: ready at once) */
      delay?: number | string;
      /** not with delay */
      runAt?: never;
    }
  | {
      /** not with runAt */
      delay?: never;
      /** when it is due, as a Date or epoch ms (on Redis's clock) */
      runAt?: number | Date;
    };

/** The options of `queue.add(body, options)`: when it is due, plus how it runs. */
export type AddOptions = Due & AddSettings;

/** A new due time for `queue.reschedule(id, options)`: `delay` or `runAt`, and where to look. */
export type RescheduleOptions = Due & {
  /** look only in this group (default: the id's home group, then all) */
  group?: number;
};

/** What add() takes besides the due time. */
export interface AddSettings {
  /** 0..1,000,000, lower runs first; FIFO among equals (default 0) */
  priority?: number;
  /** your id: adding an id that is still pending changes nothing */
  id?: string;
  /** messages with the same key go to the same group, in order */
  key?: string;
  /** put it in this group */
  group?: number;
  /** deliveries before it becomes a dead letter */
  attempts?: number;
  /** how long a failed delivery waits before the next (default: the queue's backoff) */
  backoff?: Backoff;
  /** the job's name: a command table handler routes on it (`job.name`) */
  name?: string;
  /**
   * with `id`: for this long after the add (ms, or a duration like '10m'), adding the same id
   * again changes nothing and returns the id, even once the job is done and its history gone
   */
  dedupeMs?: number | string;
}

/** 'd<delayMs>' or 'a<epochMs>', the form reschedule.lua takes a due time in. */
export function dueArgument(
  delay: unknown,
  runAt: unknown,
  name: (option: string) => string = (option) => option,
): string {
  const due = checkDue(delay, runAt, name);
  return 'runAt' in due ? `a${due.runAt}` : `d${due.delay}`;
}

function checkDue(
  delay: unknown,
  runAt: unknown,
  name: (option: string) => string,
): { delay: number } | { runAt: number } {
  if (delay !== undefined && runAt !== undefined) {
    throw errors.invalidOption(name('delay'), 'give delay or runAt, not both');
  }
  // As far ahead as a delay may be: a runAt in µs (50,000 years ahead) would never run.
  if (runAt !== undefined) return { runAt: checkNearTime(name('runAt'), runAt) };
  if (typeof delay === 'string') return { delay: parseDuration(delay, name('delay')) };
  return { delay: delay === undefined ? 0 : checkDuration(name('delay'), delay) };
}

/** One message, checked and encoded; the Queue gives it an id and a score. */
export interface PreparedMessage {
  /** its group; -1 until the Queue picks one (no group, key or id given) */
  group: number;
  /** the caller's id, or '' for a generated one */
  callerId: string;
  due: { delay: number } | { runAt: number };
  priority: number;
  /** what add.lua stores in the msg hash: the record, or a stub when it is spilled */
  record: string | Buffer;
  /** that one's size in bytes, for chunking calls */
  bytes: number;
  /** a record too big for a script: written beside the msg hash first (spill.ts) */
  spill?: Spill;
  /** the caller id's dedupe window in ms (0: none) */
  dedupeMs: number;
  /**
   * keep a runAt already past as the due time (a sorted-set intake's member: its score), not
   * Redis's now; set by src/queue/intake/zset-items.ts, never by an option
   */
  keepDue?: boolean;
}
/** One call's shared part: its clock reading and the headers made so far (most are alike). */
export interface PrepareContext {
  enqueuedAt: number;
  headers: Map<string, string>;
}

export const prepareContext = (): PrepareContext => ({
  enqueuedAt: Date.now(),
  headers: new Map(),
});

/** `flowTags`: a flow node's tags (record.ts tagsOf: its parent, its children), after the name. */
export function prepareMessage(
  config: QueueConfig,
  body: unknown,
  options: unknown,
  field = '',
  context: PrepareContext = prepareContext(),
  flowTags = '',
): PreparedMessage {
  // Where the caller wrote each value: `items[2].options.priority` in a bulk or a flow's node,
  // plain `priority` in add()'s own options.
  const name = (option: string) => (field ? `${field}.options.${option}` : option);
  const {
    delay,
    runAt,
    priority = 0,
    id,
    key,
    group,
    attempts,
    backoff,
    name: jobName,
    dedupeMs,
    ...rest
  } = checkObject(field ? `${field}.options` : 'options', options);
  rejectUnknown(field, rest);
  const due = checkDue(delay, runAt, name);
  const callerId = id === undefined ? '' : checkId(name('id'), id);
  const window = dedupeMs === undefined ? 0 : checkWindow(name('dedupeMs'), dedupeMs);
  if (window > 0 && !callerId)
    throw errors.invalidOption(name('dedupeMs'), 'needs an id: a window is kept per caller id');
  let target: number;
  if (group !== undefined) target = checkGroup(name('group'), group, config.groups);
  else if (key !== undefined) {
    if (typeof key !== 'string' || key.length === 0) {
      throw errors.invalidOption(name('key'), 'must be a non-empty string', key);
    }
    target = hashString(key) % config.groups;
  } else if (callerId) target = homeGroup(callerId, config.groups);
  else target = -1;

  const bodyField = field ? `${field}.body` : 'body';
  const stored = serialiseBody(body, bodyField);
  if (stored.bytes > config.maxBodyBytes) {
    throw errors.body(
      bodyField,
      `is ${stored.bytes} bytes, over the limit of ${config.maxBodyBytes} (maxBodyBytes)`,
    );
  }
  const checkedPriority = checkInteger(name('priority'), priority, 0, MAX_PRIORITY);
  const maxAttempts =
    attempts === undefined ? config.attempts : checkInteger(name('attempts'), attempts, 1, 1000);
  const checkedBackoff =
    backoff === undefined ? config.backoff : checkBackoff(name('backoff'), backoff);
  const shape = `${checkedPriority}|${maxAttempts}|${checkedBackoff.type}|${checkedBackoff.delay}|${checkedBackoff.max}`;
  let header = context.headers.get(shape);
  if (header === undefined) {
    const fields = { priority: checkedPriority, maxAttempts, backoff: checkedBackoff };
    header = headerOf({ ...fields, enqueuedAt: context.enqueuedAt });
    context.headers.set(shape, header);
  }
  // Unnamed messages (most) keep the header alone: not one byte more than before names.
  if (jobName !== undefined) header += tagsOf({ name: checkName(name('name'), jobName) });
  header += flowTags;
  const record = recordOf(header, stored);
  const bytes = Buffer.byteLength(header) + 1 + stored.bytes;
  const prepared = {
    group: target,
    callerId,
    due,
    priority: checkedPriority,
    record,
    bytes,
    dedupeMs: window,
  };
  if (bytes <= SPILL_BYTES) return prepared;
  const spilled = spill(header, record, bytes);
  return { ...prepared, record: spilled.stub, bytes: spilled.stub.length, spill: spilled.spill };
}

/**
 * addBulk()'s items checked and prepared, sharing one clock reading and header cache; a bad
 * one throws, named `items[i]` when there are several.
 */
export function prepareItems(
  config: QueueConfig,
  items: { body: unknown; options?: unknown }[],
): PreparedMessage[] {
  if (!Array.isArray(items)) throw errors.invalidOption('items', 'must be an array', items);
  const many = items.length > 1;
  const context = prepareContext();
  return items.map((item, i) => {
    const field = many ? `items[${i}]` : '';
    if (typeof item !== 'object' || item === null)
      throw errors.invalidOption(field || 'item', 'must be { body, options }');
    // { body, name, id } once went in unnamed and under a generated id: the options were lost.
    // (A for-in, not a rest spread: no object made per item on addBulk's hot path.)
    for (const key in item) {
      if (key === 'body' || key === 'options') continue;
      throw errors.invalidOption(
        `${field || 'item'}.${key}`,
        'is not a field of an item: give { body, options: { id, name, delay, … } }',
      );
    }
    return prepareMessage(config, item.body, item.options, field, context);
  });
}

/** A dedupe window: ms, or a duration like '10m' (at most 100 years, like a delay). */
function checkWindow(field: string, value: unknown): number {
  if (typeof value === 'string') return parseDuration(value, field);
  if (typeof value !== 'number') {
    throw errors.invalidOption(field, "must be a number of ms or a duration like '10m'", value);
  }
  return checkDuration(field, value);
}
