// The Redis servers a client talks to: the one server of a standalone client, or every
// master of a cluster (each holds some groups). Checks that must cover "every server skyq
// uses" (eviction policy, clock) go through here.
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './connection.js';

export interface ServerLink {
  /** host:port (never credentials) */
  name: string;
  client: Redis;
}

export function serverName(client: Redis): string {
  const { host, port, path, sentinels, name } = client.options;
  // Behind Sentinel the address is whichever master Sentinel named: the master's name says more.
  if (sentinels && sentinels.length > 0) return `sentinel master ${name}`;
  return path ? String(path) : `${host}:${port}`;
}

/** The servers behind `client`; on a cluster, its masters (known only once connected). */
export async function serversOf(client: RedisClient): Promise<ServerLink[]> {
  if (!isCluster(client)) return [{ name: serverName(client), client }];
  if (client.nodes('master').length === 0) await client.ping();
  return client.nodes('master').map((node) => ({ name: serverName(node), client: node }));
}
