// A pool handler that never yields cannot be told to stop: its thread is lost to it. Once its
// time limit fails it, its task is cancelled and its pool thread ended (piscina starts another).
// Before, the thread spun on for good: with a pool of one, every later job timed out too. At
// shutdown, pool jobs past the grace are handed back with no attempt counted. Jobs sent in one
// pool task with one that never settles come back when they are done, not with it: before, they
// waited for it and timed out with it. Real redis-server.
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { fixture, tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('a pool handler that never yields', () => {
  it('fails at its time limit and leaves the pool working', async () => {
    const where = { redis: redis.server.url, prefix: 'pspin', groups: 1, attempts: 1 };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      handler: fixture('pool-spin.mjs'),
      pool: 1,
      timeoutMs: 500,
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const spin = await queue.add('spin');
      expect(await queue.waitFor(spin, { timeoutMs: 10_000 })).toEqual({
        state: 'dead',
        error: 'handler timed out after 500 ms',
      });
      const fine = await queue.addBulk(Array.from({ length: 3 }, () => ({ body: 'ok' })));
      for (const id of fine) {
        expect(await queue.waitFor(id, { timeoutMs: 10_000 })).toEqual({
          state: 'done',
          result: 'fine',
        });
      }
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });

  it('is handed back at shutdown past the grace, with no attempt counted', async () => {
    const where = { redis: redis.server.url, prefix: 'pspin2', groups: 1 };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      handler: fixture('pool-spin.mjs'),
      pool: 1,
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const spin = await queue.add('spin');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await queue.get(spin)).toMatchObject({ state: 'active' });
      await launcher.stop(200);
      expect(await queue.get(spin)).toMatchObject({ state: 'ready', attempts: 0 });
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });

  it('holds back no job sent in the same pool task', async () => {
    const where = { redis: redis.server.url, prefix: 'pspin3', groups: 1, attempts: 1 };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      handler: fixture('pool-spin.mjs'),
      pool: 1,
      timeoutMs: 1500,
      paused: true, // one claim: the four jobs go to the pool as one task
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const never = await queue.add('never');
      const fine = await queue.addBulk(Array.from({ length: 3 }, () => ({ body: 'ok' })));
      await launcher.resume();
      for (const id of fine) {
        expect(await queue.waitFor(id, { timeoutMs: 10_000 })).toEqual({
          state: 'done',
          result: 'fine',
        });
      }
      expect(await queue.waitFor(never, { timeoutMs: 10_000 })).toEqual({
        state: 'dead',
        error: 'handler timed out after 1500 ms',
      });
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
