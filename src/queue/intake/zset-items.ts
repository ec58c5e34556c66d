// A sorted set's member on its way through a holding list: intake-zmove.lua writes it
// as `<due ms>:<member>`, so that whoever adds it (its launcher, or the one that adopts
// the holding list after a crash) gives it the member's own due time. It is added with
// that due time even though it is past: its lateness counts from its score, not from
// the moment it was moved, and among the group's messages it keeps its score's place.
import { addContextOf, addPrepared } from '../add-bulk.js';
import { type PreparedMessage, prepareContext, prepareMessage } from '../add-options.js';
import type { Queue } from '../queue.js';
import type { Body } from '../record.js';

/** A holding-list item of a sorted set: its due time (0: due since ever) and member bytes. */
export interface ZsetItem {
  dueMs: number;
  member: Buffer;
}

const COLON = 0x3a;

/** Splits `<due ms>:<member>`; null when the item is not of that form (never written so). */
export function zsetItemOf(item: Buffer): ZsetItem | null {
  const cut = item.indexOf(COLON);
  if (cut <= 0 || cut > 16) return null;
  const text = item.subarray(0, cut).toString('latin1');
  if (!/^\d+$/.test(text)) return null;
  return { dueMs: Number(text), member: item.subarray(cut + 1) };
}

export interface DueMessage {
  body: Body;
  id: string;
  group: number;
  priority: number;
  /** when it fell due (ms); 0: due since ever, so due from its add */
  dueMs: number;
}

type Add = (prepared: PreparedMessage[]) => Promise<string[]>;
const adders = new WeakMap<Queue, Add>();

/**
 * Adds messages under their ids with their own due times, past ones included (Queue.addBulk
 * would make a past runAt due from now). Rejects with an AddBulkError as addBulk does.
 */
export function addKeepingDue(queue: Queue, messages: DueMessage[]): Promise<string[]> {
  let add = adders.get(queue);
  if (!add) {
    const context = addContextOf(queue.client, queue.config, {
      now: (group, at) => queue.clock(group).now(at),
      run: (name, group, args) => queue.run(name, group, args),
      explain: (error) => error, // queue.run explained it already
    });
    add = (prepared) => addPrepared(context, prepared);
    adders.set(queue, add);
  }
  const shared = prepareContext();
  const prepared = messages.map((message, i) => {
    const { body, id, group, priority, dueMs } = message;
    const options = { id, group, priority, ...(dueMs > 0 ? { runAt: dueMs } : {}) };
    const one = prepareMessage(queue.config, body, options, `items[${i}]`, shared);
    one.keepDue = true;
    return one;
  });
  return add(prepared);
}
