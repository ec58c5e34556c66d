// One step of moving items from a source list into skyq, in three calls that
// each leave every item somewhere: LMOVE source → holding list (Redis moves it
// atomically), add the holding list's oldest items to their group under the ids
// their positions give them, then drop exactly those from the holding list.
// A crash between any two leaves the items in the holding list, and adding them
// again adds nothing that is still pending (src/queue/intake/holding.ts). A sorted set's
// members come into the holding list by intake-zmove.lua instead of LMOVE; the rest is alike.
import { isUtf8 } from 'node:buffer';
import type { IntakeScripts } from '../../redis/intake-scripts.js';
import type { Queue } from '../queue.js';
import { type HoldingRef, itemId } from './holding.js';
import { deadLetterOversize } from './oversize.js';
import { addKeepingDue, type DueMessage, zsetItemOf } from './zset-items.js';

/** What one take() found. */
export interface Taken {
  /** the holding list's oldest items, oldest first */
  items: Buffer[];
  /** the position of items[0] (the counter's value) */
  first: number;
  /** the holding list's length after the moves */
  held: number;
  /** the source list's length after the moves (null: not read, or it failed) */
  sourceLength: number | null;
  /** why the source list could not be read (a key of the wrong type, …) */
  sourceError: Error | null;
}

/**
 * Moves up to `moves` items from `source` into the holding list (none when `source` is
 * null), then reads its `max` oldest items: one pipeline, on the list's slot.
 */
export async function take(
  queue: Queue,
  ref: HoldingRef,
  source: string | null,
  moves: number,
  max: number,
): Promise<Taken> {
  const pipeline = queue.client.pipeline();
  if (source !== null) {
    for (let i = 0; i < moves; i++) pipeline.lmoveBuffer(source, ref.key, 'RIGHT', 'LEFT');
    pipeline.llen(source);
  }
  pipeline.lrangeBuffer(ref.key, -max, -1);
  pipeline.get(ref.taken);
  pipeline.llen(ref.key);
  const replies = (await pipeline.exec()) ?? [];
  let sourceError: Error | null = null;
  let sourceLength: number | null = null;
  if (source !== null) {
    for (const [error] of replies.slice(0, moves + 1)) sourceError ??= error;
    const [lengthError, length] = replies[moves] ?? [];
    if (!lengthError) sourceLength = Number(length);
  }
  const [[rangeError, range], [takenError, taken], [heldError, held]] = replies.slice(-3) as [
    [Error | null, Buffer[]],
    [Error | null, string | null],
    [Error | null, number],
  ];
  const failed = rangeError ?? takenError ?? heldError;
  if (failed) throw failed;
  return {
    // LRANGE reads left to right; the oldest item is the rightmost.
    items: range.reverse(),
    first: Number(taken ?? 0),
    held: Number(held),
    sourceLength,
    sourceError,
  };
}

/** The body an item becomes: its exact bytes, as text when they are valid UTF-8. */
export const bodyOfItem = (item: Buffer): string | Buffer =>
  isUtf8(item) ? item.toString('utf8') : item;

/**
 * Adds `taken.items` to their group (those over maxBodyBytes as dead letters), then drops
 * them from the holding list. Returns false when the drop found the list adopted by
 * another launcher (which adds the same items under the same ids): nothing was dropped.
 * A sorted set's items (`ref.scoreUnit`) are `<due ms>:<member>` and keep their due time.
 */
export async function hand(
  queue: Queue,
  scripts: IntakeScripts,
  ref: HoldingRef,
  taken: Taken,
): Promise<boolean> {
  const { maxBodyBytes } = queue.config;
  const messages: DueMessage[] = [];
  const oversize: Promise<unknown>[] = [];
  const source = ref.scoreUnit ? 'sorted set' : 'list';
  taken.items.forEach((item, i) => {
    const id = itemId(ref, taken.first + i);
    const { member, dueMs } = (ref.scoreUnit && zsetItemOf(item)) || { member: item, dueMs: 0 };
    if (member.length > maxBodyBytes) {
      const reason = `intake item from ${source} ${JSON.stringify(ref.list)} is ${member.length} bytes, over maxBodyBytes (${maxBodyBytes})`;
      oversize.push(deadLetterOversize(queue, ref, id, member, reason));
      return;
    }
    messages.push({
      body: bodyOfItem(member),
      id,
      group: ref.group,
      priority: ref.priority,
      dueMs,
    });
  });
  await Promise.all([addAll(queue, ref, messages), ...oversize]);
  const kept = await scripts.run('commit', [ref.key, ref.taken], [taken.items.length, taken.first]);
  return kept === 1;
}

/** A list's items go in as any add does (due now); a sorted set's keep their own due times. */
function addAll(queue: Queue, ref: HoldingRef, messages: DueMessage[]): Promise<unknown> | null {
  if (messages.length === 0) return null;
  if (ref.scoreUnit) return addKeepingDue(queue, messages);
  const items = messages.map(({ body, id, group, priority }) => ({
    body,
    options: { id, group, priority },
  }));
  return queue.addBulk(items);
}
