// One place that turns user options into an ioredis client, standalone or
// cluster, so the queue, the actors and the CLI connect the same way.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { errors } from '../errors.js';

export type RedisClient = Redis | Cluster;

export interface ClusterNode {
  host: string;
  port: number;
}

export interface ConnectionOptions {
  /** redis:// URL of a standalone server (default redis://127.0.0.1:6379) */
  redis?: string;
  /** seed nodes of a Redis Cluster, instead of `redis` */
  cluster?: ClusterNode[];
  /** an ioredis client you made yourself; skyq will not close it */
  connection?: RedisClient;
  /**
   * batch the commands issued in one tick into one write (default true: many
   * concurrent producers gain); a consumer sending one call at a time does not
   */
  autoPipelining?: boolean;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface ConnectExtras {
  /** connection name shown by CLIENT LIST */
  name?: string;
  /** for blocking reads: never give up on a command while reconnecting */
  blocking?: boolean;
}

export function connect(options: ConnectionOptions, extras: ConnectExtras = {}): RedisClient {
  const pipelining = options.autoPipelining ?? true;
  const common: RedisOptions = {
    enableAutoPipelining: pipelining,
    ...(extras.name ? { connectionName: extras.name } : {}),
    ...(extras.blocking ? { maxRetriesPerRequest: null } : {}),
  };
  if (options.cluster !== undefined) {
    if (!Array.isArray(options.cluster) || options.cluster.length === 0) {
      throw errors.invalidOption('cluster', 'must be a non-empty list of { host, port }');
    }
    for (const node of options.cluster) {
      if (typeof node?.host !== 'string' || !Number.isInteger(node?.port)) {
        throw errors.invalidOption(
          'cluster',
          'every node needs a host string and a port number',
          node,
        );
      }
    }
    return new Cluster(options.cluster, { enableAutoPipelining: pipelining, redisOptions: common });
  }
  const url = options.redis ?? DEFAULT_REDIS_URL;
  if (typeof url !== 'string' || !/^rediss?:\/\//.test(url)) {
    throw errors.invalidOption('redis', 'must be a redis:// or rediss:// URL', url);
  }
  return new Redis(url, common);
}

/** Parses "host:port,host:port" (the CLI's --cluster) into nodes. */
export function parseClusterNodes(list: string): ClusterNode[] {
  return list.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    const port = Number(entry.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
      throw errors.invalidOption('cluster', 'expected host:port[,host:port…]', entry);
    }
    return { host: entry.slice(0, at), port };
  });
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}
