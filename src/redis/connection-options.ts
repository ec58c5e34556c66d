// What a connection is made from: the options, their checks, and how a target
// is shown (never with its password). connection.ts turns them into clients.
import type { Cluster, Redis } from 'ioredis';
import { errors } from '../base/errors.js';
import { redactUrl } from '../base/redact.js';
import { defaultRedisUrl } from './default-redis.js';
import { checkSentinel, describeSentinel, type SentinelOptions } from './sentinel.js';
import { checkTls, type TlsOptions } from './tls.js';

/** An ioredis client: a standalone server's (or a Sentinel master's), or a cluster's. */
export type RedisClient = Redis | Cluster;
export type { SentinelNode, SentinelOptions } from './sentinel.js';

/** One seed node of a Redis Cluster. */
export interface ClusterNode {
  /** its host name or address */
  host: string;
  /** its port */
  port: number;
}

/** Where Redis is (one of redis, cluster, sentinel or connection), and how to talk to it. */
export interface ConnectionOptions {
  /**
   * redis:// or rediss:// (TLS) URL of a standalone server. Default, when no other connection
   * option is given either: $REDIS_URL, else the embedded server `skyq start` runs (SKYQ_EMBEDDED_PORT,
   * 6379), else redis://127.0.0.1:6379
   */
  redis?: string;
  /** seed nodes of a Redis Cluster, instead of `redis` */
  cluster?: ClusterNode[];
  /** the master a set of Redis Sentinels names, instead of `redis` (see sentinel.ts) */
  sentinel?: SentinelOptions;
  /** an ioredis client you made yourself; skyq will not close it */
  connection?: RedisClient;
  /**
   * batch the commands issued in one tick into one write (default true: many
   * concurrent producers gain); a consumer sending one call at a time does not.
   * Always off on a cluster, where it would break live resharding (connection.ts).
   */
  autoPipelining?: boolean;
  /**
   * TLS settings (CA, client certificate and key for mTLS). Giving them turns
   * TLS on, also with a redis:// URL; for a cluster they apply to every node.
   */
  tls?: TlsOptions;
  /**
   * Give up instead of reconnecting forever (default false): when Redis cannot be
   * reached, commands fail within a few seconds with ERR_SKYQ_UNREACHABLE. For
   * one-shot scripts; the CLI's short commands use it.
   */
  failFast?: boolean;
  /**
   * How long a command waits for a Redis that does not answer before it fails with
   * ERR_SKYQ_UNREACHABLE (default 5000 ms): no connection for that long fails what waits and
   * refuses what comes until the server answers again, and a connected server silent that
   * long times the command out. Reconnecting never stops. 0 waits as long as it takes.
   */
  unreachableMs?: number;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const CONNECTION_KEYS = [
  'redis',
  'cluster',
  'sentinel',
  'connection',
  'autoPipelining',
  'tls',
  'failFast',
  'unreachableMs',
] as const;

/**
 * The options with the Redis they reach: when they name none (no redis, cluster, sentinel or
 * connection), REDIS_URL, else the embedded server `skyq start` runs, else 127.0.0.1
 * (default-redis.ts).
 */
export function withDefaultRedis<T extends ConnectionOptions>(options: T): T {
  const { redis, cluster, sentinel, connection } = options;
  if (redis !== undefined || cluster !== undefined || sentinel !== undefined) return options;
  if (connection !== undefined) return options;
  const url = defaultRedisUrl();
  if (url === process.env.REDIS_URL) {
    try {
      checkRedisUrl(url);
    } catch (error) {
      throw errors.invalidOption('REDIS_URL', (error as Error).message.replace(/^redis: /, ''));
    }
  }
  return { ...options, redis: url };
}

/** The options without the connection ones (for checks of what remains), after checking them. */
export function withoutConnectionOptions(
  options: Record<string, unknown>,
): Record<string, unknown> {
  checkConnectionOptions(options as ConnectionOptions);
  const rest = { ...options };
  for (const key of CONNECTION_KEYS) delete rest[key];
  return rest;
}

/** Throws a SkyqError naming the field when redis, cluster, sentinel or tls is malformed. */
export function checkConnectionOptions(options: ConnectionOptions): void {
  if (options.sentinel !== undefined) {
    const other =
      options.cluster !== undefined ? 'cluster' : options.redis !== undefined ? 'redis' : null;
    if (other) throw errors.invalidOption('sentinel', `give sentinel or ${other}, not both`);
    checkSentinel(options.sentinel);
  } else if (options.cluster !== undefined) {
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
  } else if (options.redis !== undefined) checkRedisUrl(options.redis);
  if (options.tls !== undefined) checkTls(options.tls);
  const wait = options.unreachableMs;
  if (wait !== undefined && !(Number.isInteger(wait) && wait >= 0 && wait <= 3_600_000))
    throw errors.invalidOption('unreachableMs', 'must be whole ms from 0 to 3600000', wait);
}

/** A redis:// or rediss:// URL with a host and a valid port; the error never shows a password. */
export function checkRedisUrl(url: unknown): string {
  if (typeof url !== 'string') throw errors.invalidOption('redis', 'must be a URL string', url);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const problem =
    parsed === undefined
      ? 'is not a URL: expected redis://[user:password@]host[:port][/db]'
      : !['redis:', 'rediss:'].includes(parsed.protocol)
        ? `must be a redis:// or rediss:// URL, not ${parsed.protocol}//`
        : parsed.hostname === ''
          ? 'has no host: expected redis://[user:password@]host[:port][/db]'
          : undefined;
  if (problem) throw errors.invalidOption('redis', problem, redactUrl(url));
  return url;
}

/** The connection uses TLS: a rediss:// URL, or TLS options. */
export function usesTls(options: ConnectionOptions): boolean {
  return options.tls !== undefined || (options.redis ?? '').startsWith('rediss:');
}

/** Where a client points, fit to show: the URL without its password, the seeds or sentinels. */
export function describeTarget(options: ConnectionOptions): string {
  if (options.sentinel) return describeSentinel(options.sentinel);
  if (options.cluster)
    return `cluster ${options.cluster.map((n) => `${n.host}:${n.port}`).join(',')}`;
  return redactUrl(options.redis ?? defaultRedisUrl());
}

/** Parses "host:port,host:port" (the CLI's --cluster, or the flag named) into nodes. */
export function parseClusterNodes(list: string, flag = 'cluster'): ClusterNode[] {
  return list.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    const port = Number(entry.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
      throw errors.invalidOption(flag, 'expected host:port[,host:port…]', entry);
    }
    return { host: entry.slice(0, at), port };
  });
}
