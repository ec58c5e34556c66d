/**
 * Vitest-facing wrappers around src/redis/server.ts: every suite gets its own private
 * redis-server (or cluster) and never touches a shared Redis.
 */
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  redisNotInstalledError,
  redisServerAvailable,
  type StartRedisServerOptions,
  startRedisCluster,
  startRedisServer,
} from '../../src/redis/server.js';

export type { RedisClusterHandle, RedisServerHandle };

/** Throws an error carrying REDIS_INSTALL_HINT when redis-server is not on PATH. */
export function requireRedisServer(): void {
  if (!redisServerAvailable()) throw redisNotInstalledError();
}

/** A private standalone redis-server; call `stop()` in afterAll/afterEach. */
export function startStandalone(opts: StartRedisServerOptions = {}): Promise<RedisServerHandle> {
  requireRedisServer();
  return startRedisServer(opts);
}

/** A private 3-master Redis Cluster (no replicas); call `stop()` in afterAll. */
export function startCluster(opts: { masters?: number } = {}): Promise<RedisClusterHandle> {
  requireRedisServer();
  return startRedisCluster(opts);
}
