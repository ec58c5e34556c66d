/**
 * A live reshard of one hash slot between two masters of a running cluster, done the way
 * `redis-cli --cluster reshard` does it: the target IMPORTING, the source MIGRATING, the slot's
 * keys moved with MIGRATE … KEYS in small batches (all of a group's keys share its slot, so
 * CLUSTER GETKEYSINSLOT lists every one of them), then SETSLOT … NODE on every master. The
 * batches are small and spaced so the slot stays half-moved for a while: commands on it meet
 * TRYAGAIN (some keys here, some there) and ASK (all gone) meanwhile.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { onNode } from './cluster.js';

export interface SlotMove {
  /** when the source was set MIGRATING (Date.now()) */
  startedAt: number;
  /** when the last master was told the slot's new owner: the migration's end */
  endedAt: number;
  /** keys moved */
  keys: number;
}

export interface MoveOptions {
  /** keys per MIGRATE */
  batch?: number;
  /** pause between MIGRATEs */
  pauseMs?: number;
}

const myId = (port: number) => onNode(port, async (c) => String(await c.call('CLUSTER', 'MYID')));

/** Moves `slot` from the master on port `from` to the one on `to`; `others` are told too. */
export async function moveSlot(
  slot: number,
  from: number,
  to: number,
  others: number[],
  options: MoveOptions = {},
): Promise<SlotMove> {
  const { batch = 2, pauseMs = 150 } = options;
  const [sourceId, targetId] = await Promise.all([myId(from), myId(to)]);
  await onNode(to, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId));
  const startedAt = Date.now();
  await onNode(from, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId));
  let moved = 0;
  await onNode(from, async (c) => {
    for (;;) {
      const keys = (await c.callBuffer('CLUSTER', 'GETKEYSINSLOT', slot, batch)) as Buffer[];
      if (keys.length === 0) return;
      await c.callBuffer('MIGRATE', '127.0.0.1', to, '', 0, 5000, 'KEYS', ...keys);
      moved += keys.length;
      await sleep(pauseMs);
    }
  });
  // The target first, then the source, then the rest (the order the Redis docs give).
  for (const port of [to, from, ...others]) {
    await onNode(port, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId));
  }
  return { startedAt, endedAt: Date.now(), keys: moved };
}
