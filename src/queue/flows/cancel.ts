// cancel of flow members (lua/cancel.lua): a waiting parent goes with its pending children (in
// its own slot in the same call; those in other slots named in the reply, and cancelled here
// with 'cascade'); a mandatory child of a waiting parent is refused. When that parent lives in
// another slot, cancel.lua cannot see it: it asks, the parent's state is read there, and the
// call is made again with 'force' when the parent no longer waits (dead, cancelled, gone).
import { errors } from '../../base/errors.js';
import { textOf } from '../record-read.js';
import type { Flows } from './flows.js';

export type CancelMode = '' | 'force' | 'cascade';
export type CancelScript = (
  group: number,
  id: string | Buffer,
  mode: CancelMode,
  /** 'cascade': the parent being cancelled, "<group>:<id>" */
  parent?: string,
) => Promise<unknown>;

/** Cancels `id` in `group`: true when it was pending (delayed, ready or waiting) and is gone. */
export async function cancelIn(
  run: CancelScript,
  flows: Flows<unknown>,
  group: number,
  id: string | Buffer,
  mode: CancelMode = '',
  parent?: string,
): Promise<boolean> {
  const reply = await run(group, id, mode, parent);
  if (!Array.isArray(reply)) {
    // 2: an optional child's outcome waits in this slot's outbox for its parent elsewhere.
    if (reply === 2) flows.relay.kick(group);
    return Number(reply) > 0;
  }
  const [head, ...rest] = reply as (string | number)[];
  const shown = typeof id === 'string' ? id : textOf(id);
  if (head === 'refused') throw errors.flowChildWaitedFor(shown, String(rest[1]));
  if (head === 'ask') {
    const state = await flows.stateOf(String(rest[1]), Number(rest[0]));
    if (state === 'waiting') throw errors.flowChildWaitedFor(shown, String(rest[1]));
    return cancelIn(run, flows, group, id, 'force');
  }
  if (head === 2) flows.relay.kick(group);
  // A cancelled parent's children in other groups, each with its parent: each goes (with its
  // own children) when its record names that parent.
  const cascades: Promise<boolean>[] = [];
  for (let i = 0; i + 1 < rest.length; i += 2) {
    const text = String(rest[i]);
    const colon = text.indexOf(':');
    const [childGroup, child] = [Number(text.slice(0, colon)), text.slice(colon + 1)];
    cascades.push(cancelIn(run, flows, childGroup, child, 'cascade', String(rest[i + 1])));
  }
  await Promise.all(cascades);
  return true;
}
