// How long a command may wait for a Redis that does not answer. ioredis, left to itself,
// keeps a command in its offline queue through 20 reconnect attempts (10 s for a refused
// port, minutes for a host that drops packets), so `queue.add()` on a dead server took 10 to
// 33 s to fail. Here a client that has had no connection for `ms` fails what it queued and
// refuses what comes next at once (ERR_SKYQ_UNREACHABLE once explained), until it is ready
// again; reconnecting goes on all the while, so a long-lived client recovers by itself. A
// connected server that does not answer (frozen, overloaded) is bounded by ioredis's own
// commandTimeout, set beside this in connection.ts.
//
// The trade-off: a command failed this way was never sent (it sat in the offline queue), so
// it did not happen. One that timed out on a connected, silent server may still run when the
// server wakes: its outcome is unknown, as with any lost reply (addBulk's retry() covers it).
import { Cluster } from 'ioredis';
import type { RedisClient } from './connection-options.js';

/** Default for `unreachableMs`: the library's calls fail within this when no server answers. */
export const DEFAULT_UNREACHABLE_MS = 5000;

/** The message ioredis rejects with while the offline queue is off (failure.ts knows it). */
const offlineMessage = (client: RedisClient) =>
  client instanceof Cluster
    ? "Cluster isn't ready and enableOfflineQueue options is false"
    : "Stream isn't writeable and enableOfflineQueue options is false";

interface Flushable {
  flushQueue(error: Error, which?: { offlineQueue: boolean; commandQueue: boolean }): void;
}

/** Starts the clock at once: a client that never connects fails its commands after `ms` too. */
export function boundWaits(client: RedisClient, ms: number): void {
  let timer: NodeJS.Timeout | undefined;
  const setQueueing = (on: boolean) => {
    client.options.enableOfflineQueue = on;
  };
  const gaveUp = () => {
    timer = undefined;
    setQueueing(false);
    // flushQueue is ioredis's own (private in its types): only the offline queue, never
    // commands already written.
    (client as unknown as Flushable).flushQueue(new Error(offlineMessage(client)), {
      offlineQueue: true,
      commandQueue: false,
    });
  };
  const down = () => {
    if (timer !== undefined || client.options.enableOfflineQueue === false) return;
    timer = setTimeout(gaveUp, ms);
    timer.unref();
  };
  client.on('ready', () => {
    clearTimeout(timer);
    timer = undefined;
    setQueueing(true);
  });
  client.on('close', down);
  client.on('end', () => clearTimeout(timer));
  down();
}
