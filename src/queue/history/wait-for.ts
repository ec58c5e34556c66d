// queue.waitFor(): a job's end, whether it came before the call (while its history is kept)
// or after (told by the group's fin stream: see waiters.ts).
import { errors } from '../../base/errors.js';
import type { MessageInfo } from '../message-info.js';
import { checkDuration, checkObject, rejectUnknown } from '../options.js';
import type { Body } from '../record.js';
import type { Waiters } from './waiters.js';

/** How a job waited for ended: its result, or the error it died of. */
/** How a job `queue.waitFor(id)` waited for ended: done with its result, or dead with its error. */
export type WaitResult =
  | {
      /** its handler succeeded */
      state: 'done';
      /** what the handler returned (undefined when nothing, or not kept whole) */
      result: Body | undefined;
    }
  | {
      /** it failed its last attempt, or could not be read */
      state: 'dead';
      /** the last error its handler threw, if any */
      error: string | null;
    };

export type GetInfo = (id: string, options: { group?: number }) => Promise<MessageInfo | null>;

/** What a job's state says of its end: null while it has not ended, 'gone' when not there. */
export function endingOf(info: MessageInfo | null): 'done' | 'dead' | 'gone' | null {
  if (!info) return 'gone';
  return info.state === 'done' || info.state === 'dead' ? info.state : null;
}

/** What `queue.waitFor(id, options)` takes. */
export interface WaitForOptions {
  /** how long to wait, in ms (default 30 s) */
  timeoutMs?: number;
  /** the job's group, when it is not its id's home group */
  group?: number;
  /**
   * Called with the job's progress as its handler reports it (ctx.progress), first with the
   * last one reported before the call; what it throws is ignored.
   */
  onProgress?: (progress: unknown) => void;
}

export async function waitForJob(
  get: GetInfo,
  waiters: () => Waiters,
  id: string,
  options: WaitForOptions,
): Promise<WaitResult> {
  const { timeoutMs = 30_000, group, onProgress, ...rest } = checkObject('options', options);
  rejectUnknown('', rest);
  const ms = checkDuration('timeoutMs', timeoutMs);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw errors.invalidOption('onProgress', 'must be a function', onProgress);
  const told = onProgress as WaitForOptions['onProgress'];
  const first = await get(id, group === undefined ? {} : { group: group as number });
  if (!first) throw errors.notFound(id, 'never added, cancelled, or finished and not kept');
  let info: MessageInfo | null = first;
  // The last progress reported before the call comes first, whether the job still runs or
  // already ended: a caller that came late (a fast handler) learns it all the same.
  if (told && first.progress !== undefined) {
    try {
      told(first.progress);
    } catch {
      // the caller's callback: its failure does not end the wait
    }
  }
  if (first.state !== 'done' && first.state !== 'dead') {
    const ending = await waiters().wait(id, first.group, ms, told);
    if (ending === 'gone') throw errors.notFound(id, 'cancelled, or finished and not kept');
    // Told by the stream, whoever cancelled it (lua/cancel.lua, a schedule's change).
    if (ending === 'cancelled') throw errors.cancelled(id);
    info = await get(id, { group: first.group });
    // Finished and not kept (keepDone: false): the stream said how, the rest is gone.
    if (!info || (info.state !== 'done' && info.state !== 'dead')) {
      return ending === 'done'
        ? { state: 'done', result: undefined }
        : { state: 'dead', error: null };
    }
  }
  return info.state === 'done'
    ? { state: 'done', result: info.result }
    : { state: 'dead', error: info.lastError ?? info.deadReason };
}
