/**
 * Rate limits on a real 3-master Redis Cluster: the buckets share one slot of their own
 * (`{prefix:rate}`), apart from every group's, so tokens are taken in a call of their own
 * around each group's claim. Two launchers, groups spread over the masters, one limit.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, tempDir, useRuntimeCluster, waitFor } from './helpers/runtime.js';

const ground = useRuntimeCluster();

describe('rate limits on a Redis Cluster', () => {
  it('two launchers share 50/s and a per-name 10/s over groups on every master', async () => {
    const where = { cluster: ground.cluster.nodes, prefix: 'crate', groups: 6 };
    const queue = new Queue(where);
    await queue.ready();
    await ground.client.del('fixture:rate');
    const named = await queue.addBulk(
      Array.from({ length: 30 }, (_, i) => ({ body: { i }, options: { name: 'email.send' } })),
    );
    const plain = await queue.addBulk(Array.from({ length: 220 }, (_, i) => ({ body: { i } })));
    const options = {
      ...where,
      handler: fixture('rate-record.mjs'),
      rateLimit: { max: 50, perMs: 1000, 'email.send': { max: 10, perMs: 1000 } },
    };
    const launchers = await Promise.all(
      [0, 1].map(() => startActors({ ...options, logDir: tempDir() })),
    );
    try {
      const lines = await waitFor(
        'all started',
        async () => {
          const seen = await ground.client.lrange('fixture:rate', 0, -1);
          return seen.length >= named.length + plain.length ? seen : undefined;
        },
        30_000,
      );
      const starts = lines.map((line) => {
        const [at, attempts, name, id] = line.split(' ');
        return { at: Number(at), attempts: Number(attempts), name, id };
      });
      const times = starts.map((s) => s.at).sort((a, b) => a - b);
      // 250 at 50/s with 5 saved up: about 5 s; unlimited they all go in well under one.
      expect((times.at(-1) as number) - (times[0] as number)).toBeGreaterThanOrEqual(4000);
      const mails = starts.filter((s) => s.name === 'email.send').map((s) => s.at);
      // 30 at 10/s with 1 saved up: about 3 s.
      expect(Math.max(...mails) - Math.min(...mails)).toBeGreaterThanOrEqual(2500);
      expect(new Set(starts.map((s) => s.id)).size).toBe(starts.length); // duplicates 0
      expect(starts.length).toBe(named.length + plain.length); // lost 0
      expect(starts.filter((s) => s.attempts !== 1)).toEqual([]);
      expect((await queue.rateLimits.list()).map((b) => b.name)).toEqual(['*', 'email.send']);
    } finally {
      await Promise.all(launchers.map((l) => l.stop()));
      await queue.close();
    }
  }, 90_000);
});
