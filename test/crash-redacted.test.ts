// A thread that dies of an error carrying a password (a Redis URL in its message, as a
// connection error could) must not write it anywhere: the launcher's crash line, the stats'
// lastCrash and what goes to Redis with its handed-back jobs show the URL masked. Before, the
// supervisor kept the error's stack as it was, and the crash line and lastCrash showed it whole.
// Real redis-server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('the reason an actor thread died', () => {
  it('is written with its passwords masked', async () => {
    const where = { redis: redis.server.url, prefix: 'crashpw', groups: 1 };
    const queue = new Queue(where);
    const logDir = tempDir();
    const launcher = await startActors({
      ...where,
      handler: fixture('own-crash.mjs'),
      logDir,
      publishStats: false,
    });
    try {
      await queue.add('x');
      await waitFor('a restart', () => (launcher.restarts(0) >= 1 ? true : undefined), 15_000);
      const log = await waitFor('the crash line', () => {
        const text = readFileSync(join(logDir, 'launcher.log'), 'utf8');
        return /"event":"crash"/.test(text) ? text : undefined;
      });
      expect(log).toMatch(/lost redis:\/\/skyq:\*+@10\.0\.0\.9:6379 while claiming/);
      const { actors } = await launcher.stats();
      expect(actors[0]?.lastCrash).toMatch(/lost redis:\/\/skyq:\*+@10\.0\.0\.9/);
      expect(JSON.stringify(actors)).not.toContain('s3cret-pw');
      expect(log).not.toContain('s3cret-pw');
    } finally {
      await launcher.stop();
      await queue.close();
    }
    // Nor in Redis, where the handed-back job keeps why its thread died.
    for (const key of await redis.client.keys('*crashpw*')) {
      if ((await redis.client.type(key)) !== 'hash') continue;
      expect(JSON.stringify(await redis.client.hgetall(key))).not.toContain('s3cret-pw');
    }
  });
});
