// Redis's client-side caching as a change feed, on any server from 6.0 and with no CONFIG:
// a connection with CLIENT TRACKING on is told, once, when a key it read changes. The
// watcher reads (arms) the keys of a quiet group and is then told of the next write to them,
// a plain `ZADD` of another program included, instead of reading them every 50 ms. In RESP2
// the announcements go to another connection that subscribes to `__redis__:invalidate`
// (REDIRECT to its client id), so the tracker keeps two connections of its own: one that reads
// and one that listens. Each reconnect of either is followed by a fresh CLIENT TRACKING (Redis
// forgets it with the connection) and `onReset`: what was armed is armed no more.
//
// Keys read inside a Lua script count only when the script names them in KEYS, and the
// watcher's script does not (a cluster's master holds groups of many slots): arm() is a plain
// EXISTS of the keys, sent before the script's read so no write falls between the two unseen.
import type { RedisOptions } from 'ioredis';
import { isCluster, type RedisClient, sideConnection } from '../redis/connection.js';
import { withTimeout } from './rpc.js';

export interface Tracker {
  /** Be told of the next write to each of `keys`, from when this resolves (it never rejects). */
  arm(keys: string[]): Promise<void>;
  close(): void;
}

const CHANNEL = '__redis__:invalidate';
const SETUP_TIMEOUT_MS = 5_000;

/**
 * Starts tracking on a standalone or Sentinel server; null on a cluster (each master would need
 * its own pair; the watcher polls there) or where the server refuses (before 6.0, or an ACL
 * without CLIENT). `onKeys` gets the keys written since they were armed (null: every key, as
 * after FLUSHALL); `onReset` says nothing is armed any more (a reconnect).
 */
export async function trackChanges(
  client: RedisClient,
  onKeys: (keys: string[] | null) => void,
  onReset: () => void,
  onProblem: (problem: string) => void,
): Promise<Tracker | null> {
  if (isCluster(client)) return null;
  const copy = (name: string, extra: RedisOptions = {}) =>
    sideConnection(client, { connectionName: name, lazyConnect: false, ...extra });
  // The listener subscribes anew by hand after a reconnect: its client id comes first (a
  // subscribed RESP2 connection may not ask), then tracking is pointed at it.
  const listener = copy('skyq-tracking-listen', { autoResubscribe: false });
  // No offline queue: an arming read while the reader is away fails at once (the watcher then
  // reads those groups each tick) instead of holding their checks until it is back.
  const reader = copy('skyq-tracking-read', { enableOfflineQueue: false });
  for (const connection of [listener, reader]) connection.on('error', () => undefined);
  let closed = false;
  let listenerId: string | null = null;
  const close = () => {
    closed = true;
    listener.disconnect();
    reader.disconnect();
  };
  listener.on('messageBuffer', (channel: Buffer, message: Buffer | Buffer[] | null) => {
    if (channel.toString() !== CHANNEL) return;
    onKeys(Array.isArray(message) ? message.map(String) : null);
  });
  const enable = async () => {
    if (listenerId !== null) await reader.client('TRACKING', 'ON', 'REDIRECT', listenerId);
  };
  const listen = async () => {
    listenerId = null;
    const id = String(await listener.client('ID'));
    await listener.subscribe(CHANNEL);
    listenerId = id;
    await enable();
  };
  // 'ready' only: an error while connecting is ioredis's to retry, within the setup's time.
  const readerReady = () =>
    reader.status === 'ready'
      ? Promise.resolve()
      : new Promise<void>((resolve) => reader.once('ready', () => resolve()));
  try {
    await withTimeout(readerReady().then(listen), SETUP_TIMEOUT_MS, 'client tracking');
  } catch (error) {
    close();
    onProblem(`client tracking unavailable: ${(error as Error).message}`);
    return null;
  }
  // Both connections were ready before these listeners: a 'ready' now is a reconnect.
  listener.on('ready', () => {
    if (closed) return;
    onReset();
    listen().catch(() => onReset());
  });
  reader.on('ready', () => {
    if (closed) return;
    onReset();
    enable().catch(() => onReset());
  });
  return {
    async arm(keys) {
      if (keys.length === 0 || closed) return;
      await reader.exists(...keys).catch(() => onReset());
    },
    close,
  };
}
