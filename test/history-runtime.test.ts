// The handler's return value becomes the job's result, from an actor thread and from the
// piscina pool alike. Real worker threads on a private redis-server.
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('results from the runtime', () => {
  for (const pool of [0, 2]) {
    it(`keeps what the handler returned (${pool ? 'on the pool' : 'in the actor'})`, async () => {
      const where = { redis: redis.server.url, prefix: `ret${pool}`, groups: 2 };
      const queue = new Queue(where);
      const launcher = await startActors({
        ...where,
        handler: fixture('returns.mjs'),
        pool,
        logDir: tempDir(),
        publishStats: false,
      });
      try {
        const ids = await queue.addBulk(
          ['json', 'bytes', 'nothing', 'sync'].map((body) => ({ body })),
        );
        const infos = await waitFor('all four done', async () => {
          const got = await Promise.all(ids.map((id) => queue.get(id)));
          return got.every((info) => info?.state === 'done') ? got : undefined;
        });
        const [json, bytes, nothing, sync] = infos;
        expect(json?.result).toEqual({ echoed: 'json' });
        expect(bytes?.result).toEqual(Buffer.from([1, 2, 250]));
        expect(nothing?.resultKept).toBe('none');
        expect(sync?.result).toBe('returned at once');
        for (const info of infos) {
          expect(info?.attempts).toBe(1);
          expect(info?.durationMs).toBeGreaterThanOrEqual(0);
          expect(info?.finishedAt).toBeGreaterThanOrEqual(info?.dueAt as number);
        }
      } finally {
        await launcher.stop();
        await queue.close();
      }
    });
  }
});
