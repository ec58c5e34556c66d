import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import type { Launcher } from '../src/runtime/launcher.js';
import { startActors } from '../src/start.js';
import { fixture, recorded, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('two launchers on one Redis', () => {
  it('share 20,000 messages: each done exactly once', async () => {
    const total = 20_000;
    const where = { redis: redis.server.url, prefix: 'two', groups: 4 };
    const queue = new Queue(where);
    const options = { ...where, handler: fixture('record.mjs'), publishStats: false };
    const launchers: Launcher[] = [];
    try {
      const started = await Promise.allSettled([
        startActors({ ...options, logDir: tempDir() }),
        startActors({ ...options, logDir: tempDir() }),
      ]);
      for (const result of started) {
        if (result.status === 'fulfilled') launchers.push(result.value);
      }
      for (const result of started) if (result.status === 'rejected') throw result.reason;
      expect(launchers[0]?.id).not.toBe(launchers[1]?.id);
      const now = Date.now();
      const ids = await queue.addBulk(
        Array.from({ length: total }, (_, i) => ({
          body: { list: 'two' },
          options: i % 2 === 0 ? {} : { runAt: now + Math.random() * 1000 },
        })),
      );
      expect(new Set(ids).size).toBe(total);

      await waitFor(
        'every message done',
        async () => ((await redis.client.llen('two')) >= total ? true : undefined),
        60_000,
        100,
      );
      await waitFor('every ack', async () => {
        const counts = await queue.counts();
        return counts.every((c) => c.delayed + c.ready + c.active + c.dead === 0)
          ? true
          : undefined;
      });
      const done = await recorded(redis.client, 'two');
      expect(done).toHaveLength(total);
      expect(new Set(done).size).toBe(total);
      expect([...done].sort()).toEqual([...ids].sort());

      // Both took part, and their own figures agree with the record (a generous time limit:
      // a starved machine must not turn an answer into TIMEOUT).
      const stats = await Promise.all(launchers.map((l) => l.stats()));
      for (const s of stats) expect(s.actors.map((a) => a.status)).toEqual(Array(4).fill('ok'));
      const doneBy = stats.map((s) => s.totals.done);
      expect(doneBy[0]).toBeGreaterThan(0);
      expect(doneBy[1]).toBeGreaterThan(0);
      expect((doneBy[0] ?? 0) + (doneBy[1] ?? 0)).toBe(total);
      for (const s of stats) expect(s.totals).toMatchObject({ failed: 0, dead: 0, inFlight: 0 });
    } finally {
      await Promise.all(launchers.map((l) => l.stop()));
      await queue.close();
    }
  });
});
