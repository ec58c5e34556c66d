// Where running launchers publish their live figures, so `skyq stats` in any
// process (or on any host) can show every launcher's actors. One string key
// per launcher that expires unless refreshed, and a sorted set to find them.
import type { RedisClient } from '../redis/connection.js';
import { emptyHistogram } from './histogram.js';
import type { LauncherStats } from './launcher-stats.js';

const TTL_MS = 5000;

const indexKey = (prefix: string) => `${prefix}:launchers`;
const statsKey = (prefix: string, id: string) => `${prefix}:launcher:${id}`;

export async function publishStats(
  client: RedisClient,
  prefix: string,
  stats: LauncherStats,
): Promise<void> {
  // Bucket lists are for merging inside one launcher; other processes need the summaries.
  const empty = {
    lateness: emptyHistogram(),
    handler: emptyHistogram(),
    redisRtt: emptyHistogram(),
  };
  const slim: LauncherStats = {
    ...stats,
    totals: { ...stats.totals, histograms: empty },
    actors: stats.actors.map((view) => ({
      ...view,
      ...(view.stat ? { stat: { ...view.stat, histograms: empty } } : {}),
    })),
  };
  await client.set(statsKey(prefix, stats.launcherId), JSON.stringify(slim), 'PX', TTL_MS);
  await client.zadd(indexKey(prefix), Date.now(), stats.launcherId);
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
  await client.zremrangebyscore(indexKey(prefix), '-inf', Date.now() - 10 * TTL_MS);
  const ids = await client.zrangebyscore(indexKey(prefix), Date.now() - TTL_MS, '+inf');
  const texts = await Promise.all(ids.map((id) => client.get(statsKey(prefix, id))));
  return texts
    .filter((text): text is string => text !== null)
    .map((text) => JSON.parse(text) as LauncherStats);
}
