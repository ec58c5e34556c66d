/**
 * Small helpers for the queue suites: a Queue on a private server with a prefix of its own (so
 * tests in one file never see each other's messages), a plain client on the same server, and
 * polling with a deadline instead of fixed sleeps.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { KEEP_FIELD } from '../../src/base/keys.js';
import { type Message, Queue, type QueueOptions } from '../../src/index.js';
import { type RedisClusterHandle, type RedisServerHandle, startStandalone } from './redis.js';

export type Target = { redis: string } | { cluster: { host: string; port: number }[] };

export function targetOf(handle: RedisServerHandle | RedisClusterHandle): Target {
  return 'nodes' in handle ? { cluster: handle.nodes } : { redis: handle.url };
}

let counter = 0;
/** A prefix nobody else in this process uses. */
export const freshPrefix = (name = 'tq') => `${name}${process.pid}x${++counter}`;

/** A connected Queue with its own prefix; close it (or use closeAll) when done. */
export async function openQueue(target: Target, options: QueueOptions = {}): Promise<Queue> {
  const queue = new Queue({ ...target, prefix: freshPrefix(), ...options });
  await queue.ready();
  return queue;
}

/** A plain ioredis client on the same server(s), as another program would use. */
export function plainClient(target: Target): Redis | Cluster {
  return 'cluster' in target ? new Cluster(target.cluster) : new Redis(target.redis);
}

/** Redis server time in ms, the clock the scripts use. */
export async function redisNow(client: Redis | Cluster): Promise<number> {
  const [s, us] = (await client.time()) as [number | string, number | string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Calls `probe` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Claims from one group until a claim returns at least `count` messages in total. */
export async function claimAtLeast(
  queue: Queue,
  group: number,
  count: number,
  leaseMs = 30_000,
  timeoutMs = 10_000,
): Promise<Message[]> {
  const got: Message[] = [];
  await waitFor(
    `${count} message(s) in group ${group}`,
    async () => {
      got.push(...(await queue.claim(group, count - got.length, leaseMs)));
      return got.length >= count ? true : undefined;
    },
    timeoutMs,
  );
  return got;
}

/** Waits until the server clock has passed `ms` (epoch ms). */
export async function untilRedisTime(client: Redis | Cluster, ms: number): Promise<void> {
  await waitFor(`redis time ${ms}`, async () => ((await redisNow(client)) > ms ? true : undefined));
}

/**
 * A private redis-server for one test file: its target, a plain client on it, and a
 * `queue(options)` that opens Queues (fresh prefix each) closed after the file.
 */
export function useQueueRedis(): {
  readonly target: Target;
  readonly plain: Redis;
  queue(options?: QueueOptions): Promise<Queue>;
} {
  const queues: Queue[] = [];
  let server: RedisServerHandle | undefined;
  const context = {
    target: { redis: '' } as Target,
    plain: undefined as unknown as Redis,
    async queue(options: QueueOptions = {}) {
      const q = await openQueue(context.target, options);
      queues.push(q);
      return q;
    },
  };
  beforeAll(async () => {
    server = await startStandalone();
    context.target = { redis: server.url };
    context.plain = plainClient(context.target) as Redis;
  });
  afterAll(async () => {
    await Promise.all(queues.map((q) => q.close()));
    context.plain?.disconnect();
    await server?.stop();
  });
  return context;
}

/**
 * Returns `keep(queue)`, which closes each Queue it was given after the file. For files that
 * make Queues synchronously beside a server of their own: register this after that server's
 * hooks, and the Queues close before it stops (vitest runs after-hooks last registered first),
 * so none is left reconnecting to a stopped server for good.
 */
export function closedAfterFile(): (queue: Queue) => Queue {
  const queues: Queue[] = [];
  afterAll(() => Promise.all(queues.map((queue) => queue.close())));
  return (queue) => {
    queues.push(queue);
    return queue;
  };
}

/** Message records left in a msg hash (not counting the field that keeps it a hashtable). */
export async function recordsIn(client: Redis | Cluster, msgKey: string): Promise<number> {
  const fields = await client.hkeysBuffer(msgKey);
  return fields.filter((field) => !field.equals(KEEP_FIELD)).length;
}
