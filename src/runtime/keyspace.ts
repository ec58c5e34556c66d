// Keyspace notifications for the delayed sets, where the server allows them:
// a program that only does `ZADD task_group:3 …` sends no wake-up token, but
// Redis itself can announce the ZADD. Off on most servers (it costs the server
// a little for every write), so: 'auto' uses them when they are on, 'enable'
// turns them on (CONFIG SET), 'off' never looks. On a cluster each master
// announces only its own keys, so there is one subscriber per master.
import { isCluster, type RedisClient, sideConnection } from '../redis/connection.js';
import { withTimeout } from './rpc.js';

/** Keyspace notifications for other programs' ZADDs: use them when on, turn them on, or never. */
export type KeyspaceMode = 'auto' | 'enable' | 'off';

export interface KeyspaceSubscription {
  close(): void;
}

/** Notification flags that include ZADD events on keys: K (keyspace) with z or A. */
const covers = (flags: string) => flags.includes('K') && /[zA]/.test(flags);
/** How long start waits for the subscriptions before it goes on without notifications. */
const SUBSCRIBE_TIMEOUT_MS = 5_000;

/**
 * Calls `onKey(key)` when a ZADD touches one of `keys`. Resolves null when notifications are
 * off and may not be turned on (or CONFIG is refused, as managed services and ACLs often do).
 */
export async function watchKeyspace(
  client: RedisClient,
  keys: string[],
  mode: KeyspaceMode,
  onKey: (key: string) => void,
  onProblem: (problem: string) => void,
): Promise<KeyspaceSubscription | null> {
  if (mode === 'off') return null;
  const servers = isCluster(client) ? client.nodes('master') : [client];
  try {
    for (const server of servers) {
      const [, flags = ''] = (await server.config('GET', 'notify-keyspace-events')) as string[];
      if (covers(flags)) continue;
      if (mode === 'auto') return null;
      await server.config('SET', 'notify-keyspace-events', `${flags.replace('K', '')}Kz`);
    }
  } catch (error) {
    onProblem(`keyspace notifications unavailable: ${(error as Error).message}`);
    return null;
  }
  const subscribers = servers.map((server) => {
    const { db = 0 } = server.options;
    const subscriber = sideConnection(server, {
      connectionName: 'skyq-keyspace',
      lazyConnect: false,
    });
    subscriber.on('error', () => undefined); // ioredis reconnects and resubscribes by itself
    const prefix = `__keyspace@${db}__:`;
    subscriber.on('message', (channel: string, event: string) => {
      if (event === 'zadd') onKey(channel.slice(prefix.length));
    });
    return { subscriber, channels: keys.map((key) => `${prefix}${key}`) };
  });
  const close = () => {
    for (const { subscriber } of subscribers) subscriber.disconnect();
  };
  // Resolve only once subscribed: a ZADD right after start must already be announced to us.
  try {
    await withTimeout(
      Promise.all(subscribers.map(({ subscriber, channels }) => subscriber.subscribe(...channels))),
      SUBSCRIBE_TIMEOUT_MS,
      'keyspace subscription',
    );
  } catch (error) {
    close();
    onProblem(`keyspace subscription failed: ${(error as Error).message}`);
    return null;
  }
  return { close };
}
