/**
 * What idle actors cost Redis: script calls per second, read from INFO commandstats. An idle
 * launcher's watcher makes one call per 50 ms for all its groups on a server; an actor that
 * keeps being woken for nothing adds a claim per group and tick.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';

async function scriptCalls(client: Redis | Cluster): Promise<number> {
  const info = (await client.info('commandstats')) as string;
  const counts = [...info.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)];
  return counts.reduce((n, m) => n + Number(m[1]), 0);
}

export async function scriptCallsPerSecond(client: Redis | Cluster, ms = 2000): Promise<number> {
  const before = await scriptCalls(client);
  await sleep(ms);
  return ((await scriptCalls(client)) - before) / (ms / 1000);
}

/** Most script calls per second an idle launcher may make (20 from the watcher, and room). */
export const IDLE_CALLS_PER_SECOND = 30;
