// Turns add(body, options) into the arguments of add.lua for one message.
import type { QueueConfig } from './config.js';
import { errors } from './errors.js';
import { homeGroup, hashString } from './keys.js';
import {
  MAX_PRIORITY,
  checkBackoff,
  checkDuration,
  checkEpochMs,
  checkGroup,
  checkId,
  checkInteger,
  checkObject,
  rejectUnknown,
} from './options.js';
import { type Backoff, headerOf, serialiseBody } from './record.js';

export interface AddOptions {
  /** ms from now (default 0: ready at once) */
  delay?: number;
  /** when it is due, as a Date or epoch ms (instead of delay) */
  runAt?: number | Date;
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
  backoff?: Backoff;
}

/** 'd<delayMs>' or 'a<epochMs>', the form the scripts take a due time in. */
export function dueArgument(
  delay: unknown,
  runAt: unknown,
  name: (option: string) => string = (option) => option,
): string {
  if (delay !== undefined && runAt !== undefined) {
    throw errors.invalidOption(name('delay'), 'give delay or runAt, not both');
  }
  if (runAt !== undefined) return `a${checkEpochMs(name('runAt'), runAt)}`;
  return `d${delay === undefined ? 0 : checkDuration(name('delay'), delay)}`;
}

/** One message, ready for add.lua: its group and its four script arguments. */
export interface PreparedMessage {
  group: number;
  args: [id: string, when: string, priority: string, record: string];
}

export function prepareMessage(
  config: QueueConfig,
  body: unknown,
  options: unknown,
  nextRoundRobin: () => number,
  field = '',
): PreparedMessage {
  const name = (option: string) => (field ? `${field}.${option}` : option);
  const { delay, runAt, priority = 0, id, key, group, attempts, backoff, ...rest } = checkObject(
    name('options'),
    options,
  );
  rejectUnknown(field, rest);
  const when = dueArgument(delay, runAt, name);
  const callerId = id === undefined ? '' : checkId(name('id'), id);
  let target: number;
  if (group !== undefined) target = checkGroup(name('group'), group, config.groups);
  else if (key !== undefined) {
    if (typeof key !== 'string' || key.length === 0) {
      throw errors.invalidOption(name('key'), 'must be a non-empty string', key);
    }
    target = hashString(key) % config.groups;
  } else if (callerId) target = homeGroup(callerId, config.groups);
  else target = nextRoundRobin();

  const text = serialiseBody(body, field ? `${field}.body` : 'body');
  const bytes = Buffer.byteLength(text, 'utf8') - 1;
  if (bytes > config.maxBodyBytes) {
    throw errors.body(
      field ? `${field}.body` : 'body',
      `is ${bytes} bytes, over the limit of ${config.maxBodyBytes} (maxBodyBytes)`,
    );
  }
  const header = headerOf({
    enqueuedAt: Date.now(),
    priority: checkInteger(name('priority'), priority, 0, MAX_PRIORITY),
    maxAttempts:
      attempts === undefined ? config.attempts : checkInteger(name('attempts'), attempts, 1, 1000),
    backoff: backoff === undefined ? config.backoff : checkBackoff(name('backoff'), backoff),
  });
  return { group: target, args: [callerId, when, String(priority), header + text] };
}
