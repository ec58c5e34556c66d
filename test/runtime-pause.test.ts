import { expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/runtime/launcher.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

it('holds messages while paused and consumes them after resume()', async () => {
  const where = { redis: redis.server.url, prefix: 'paused', groups: 2 };
  const queue = new Queue(where);
  const launcher = await startActors({
    ...where,
    handler: fixture('record.mjs'),
    publishStats: false,
    logDir: tempDir(),
    paused: true,
  });
  try {
    await queue.addBulk(Array.from({ length: 20 }, () => ({ body: { list: 'paused' } })));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await redis.client.llen('paused')).toBe(0);
    expect((await queue.counts()).reduce((sum, c) => sum + c.ready, 0)).toBe(20);
    await launcher.resume();
    await waitFor('all consumed', async () =>
      (await redis.client.llen('paused')) === 20 ? true : undefined,
    );
  } finally {
    await launcher.stop();
    await queue.close();
  }
});
