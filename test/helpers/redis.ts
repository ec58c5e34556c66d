/**
 * Vitest-facing wrappers around src/redis/server.ts: every suite gets its own private
 * redis-server (or cluster) and never touches a shared Redis. Servers started here without a
 * port get one held for them (test/helpers/ports.ts) until they stop, so no other test file can
 * take it between the pick and the bind.
 */
import { Redis } from 'ioredis';
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  redisNotInstalledError,
  redisServerAvailable,
  type StartRedisServerOptions,
  startRedisCluster,
  startRedisServer,
} from '../../src/redis/server.js';
import { type HeldPort, holdPort } from './ports.js';

export { heldPort, holdPort } from './ports.js';
export type { RedisClusterHandle, RedisServerHandle };

/** Throws an error carrying REDIS_INSTALL_HINT when redis-server is not on PATH. */
export function requireRedisServer(): void {
  if (!redisServerAvailable()) throw redisNotInstalledError();
}

/** Runs `start` on held ports, giving them back when it fails or once the server stops. */
async function onHeld<T extends { stop(): Promise<void> }>(
  holds: HeldPort[],
  start: (ports: number[]) => Promise<T>,
): Promise<T> {
  const release = () => {
    for (const hold of holds) hold.release();
  };
  try {
    const handle = await start(holds.map((hold) => hold.port));
    const stop = handle.stop.bind(handle);
    let stopping: Promise<void> | undefined;
    handle.stop = () => {
      stopping ??= stop().finally(release);
      return stopping;
    };
    return handle;
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * A private standalone redis-server; call `stop()` in afterAll/afterEach. With `opts.port` (a
 * port the test holds, e.g. from heldPort(), to restart on) that port is used as it is.
 */
export async function startStandalone(
  opts: StartRedisServerOptions = {},
): Promise<RedisServerHandle> {
  requireRedisServer();
  if (opts.port !== undefined) return startRedisServer(opts);
  const hold = await holdPort({ withBus: opts.cluster });
  return onHeld([hold], ([port]) => startRedisServer({ ...opts, port }));
}

/** A private 3-master Redis Cluster (no replicas); call `stop()` in afterAll. */
export async function startCluster(opts: { masters?: number } = {}): Promise<RedisClusterHandle> {
  requireRedisServer();
  const holds: HeldPort[] = [];
  try {
    for (let i = 0; i < (opts.masters ?? 3); i++) holds.push(await holdPort({ withBus: true }));
  } catch (error) {
    for (const hold of holds) hold.release();
    throw error;
  }
  return onHeld(holds, (ports) => startRedisCluster({ ports }));
}

/**
 * Fails unless the server answering `url` is the process `pid`: after a restart on the same
 * port, a stranger that took the port in between would otherwise pass for ours.
 */
export async function expectServedBy(url: string, pid: number): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    const info = (await client.info('server')) as string;
    const answering = Number(/process_id:(\d+)/.exec(info)?.[1]);
    if (answering !== pid) {
      throw new Error(`${url} is answered by pid ${answering}, not by our redis-server ${pid}`);
    }
  } finally {
    client.disconnect();
  }
}
