// Where running launchers publish their live figures, so `skyq stats` in any
// process (or on any host) can show every launcher's actors. One string key
// per launcher that expires unless refreshed, and a sorted set to find them.
// A launcher that dies uncleanly never withdraws: every publisher prunes the
// index of entries older than PRUNE_AFTER_MS, and the index itself expires that
// long after the last publish, so it holds the launchers of the last minute or
// so, not every one that ever died. (It holds no messages: an expiry is safe.)
import type { RedisClient } from '../redis/connection.js';
import type { LauncherStats } from './launcher-stats.js';

const TTL_MS = 5000;
/** Index entries older than this are launchers that stopped publishing. */
const PRUNE_AFTER_MS = 10 * TTL_MS;

const indexKey = (prefix: string) => `${prefix}:launchers`;
const statsKey = (prefix: string, id: string) => `${prefix}:launcher:${id}`;

export async function publishStats(
  client: RedisClient,
  prefix: string,
  stats: LauncherStats,
): Promise<void> {
  // Per-actor bucket lists are for merging inside one launcher: the caller leaves them empty,
  // and sends only the totals' (a few hundred numbers each), from which the stand-alone
  // dashboard draws lateness p50/p99 per second and serves /metrics' histograms. Launchers
  // of older versions sent none: their lateness shows as a mean only (lateness-window.ts).
  await client.set(statsKey(prefix, stats.launcherId), JSON.stringify(stats), 'PX', TTL_MS);
  const index = indexKey(prefix);
  const now = Date.now();
  await Promise.all([
    client.zadd(index, now, stats.launcherId),
    client.zremrangebyscore(index, '-inf', now - PRUNE_AFTER_MS),
    client.pexpire(index, PRUNE_AFTER_MS),
  ]);
}

export async function withdrawStats(
  client: RedisClient,
  prefix: string,
  launcherId: string,
): Promise<void> {
  await client.del(statsKey(prefix, launcherId));
  await client.zrem(indexKey(prefix), launcherId);
}

/** Every launcher that published within the last few seconds. */
export async function readAllStats(client: RedisClient, prefix: string): Promise<LauncherStats[]> {
  await client.zremrangebyscore(indexKey(prefix), '-inf', Date.now() - PRUNE_AFTER_MS);
  const ids = await client.zrangebyscore(indexKey(prefix), Date.now() - TTL_MS, '+inf');
  const texts = await Promise.all(ids.map((id) => client.get(statsKey(prefix, id))));
  return texts
    .filter((text): text is string => text !== null)
    .map((text) => JSON.parse(text) as LauncherStats);
}
