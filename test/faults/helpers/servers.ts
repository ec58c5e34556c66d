/**
 * The two servers most fault tests need: the queue's own redis-server (the one faults hit) and a
 * recorder server for the tally fixture's record, which no fault touches.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { StartRedisServerOptions } from '../../../src/redis/server.js';
import { type RedisServerHandle, startStandalone } from '../../helpers/redis.js';
import { removeTempDirs } from '../../helpers/runtime.js';

export interface FaultServers {
  readonly queue: RedisServerHandle;
  readonly recorder: RedisServerHandle;
  /** a plain client on the recorder */
  readonly record: Redis;
  /** env for processes that run the tally fixture */
  readonly env: NodeJS.ProcessEnv;
}

/** Starts both servers before the file's tests and stops them after. */
export function useFaultServers(queueOptions: StartRedisServerOptions = {}): FaultServers {
  const context = {} as { -readonly [K in keyof FaultServers]: FaultServers[K] };
  beforeAll(async () => {
    [context.queue, context.recorder] = await Promise.all([
      startStandalone(queueOptions),
      startStandalone(),
    ]);
    context.record = new Redis(context.recorder.url);
    context.env = { SKYQ_TALLY_REDIS: context.recorder.url };
    process.env.SKYQ_TALLY_REDIS = context.recorder.url; // for actors in this process
  });
  afterAll(async () => {
    context.record?.disconnect();
    await Promise.all([context.queue?.stop(), context.recorder?.stop()]);
    removeTempDirs();
  });
  return context;
}
