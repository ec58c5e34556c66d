// While a Redis Cluster slot migrates (a live reshard), a script on a group's keys is answered
// TRYAGAIN (some of its keys moved, some not) or ASK (all moved), and, on a client whose slot
// map is behind, MOVED once it ended. Redis refuses these before running anything, so sending
// the call again is always safe. ioredis retries them by itself, but only up to
// `maxRedirections` (16 tries, 100 ms apart for TRYAGAIN: 1.6 s), and a migration of a big
// group lasts longer. Here such a refusal is sent again with a growing pause, for up to
// SLOT_MOVE_PATIENCE_MS, so a caller sees the call succeed late rather than fail.
import { setTimeout as sleep } from 'node:timers/promises';
import { isCluster, type RedisClient } from './connection.js';

/** How long a call waits out a slot's migration before the refusal reaches its caller. */
export const SLOT_MOVE_PATIENCE_MS = 15_000;
const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 500;

/** A refusal of a slot on the move, also as ioredis's "Too many Cluster redirections" wrapper. */
const SLOT_MOVING =
  /^(?:(?:ReplyError: )?(TRYAGAIN|ASK|MOVED) |Too many Cluster redirections\. Last error: ReplyError: (TRYAGAIN|ASK|MOVED) )/;

/** TRYAGAIN, ASK or MOVED: the refusal's kind, or undefined for any other error. */
export function slotMoveOf(error: unknown): 'TRYAGAIN' | 'ASK' | 'MOVED' | undefined {
  if (!(error instanceof Error)) return undefined;
  const match = SLOT_MOVING.exec(error.message);
  return (match?.[1] ?? match?.[2]) as 'TRYAGAIN' | 'ASK' | 'MOVED' | undefined;
}

/** Runs `send`, sending it again while a cluster slot it needs is on the move (see above). */
export async function whileSlotMoves<T>(client: RedisClient, send: () => Promise<T>): Promise<T> {
  if (!isCluster(client)) return send();
  const deadline = performance.now() + SLOT_MOVE_PATIENCE_MS;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    try {
      return await send();
    } catch (error) {
      const kind = slotMoveOf(error);
      if (kind === undefined || performance.now() + pause > deadline) throw error;
      // The slot has a new owner: learn the whole map, not just this slot's line.
      if (kind === 'MOVED') client.refreshSlotsCache();
      await sleep(pause);
    }
  }
}
