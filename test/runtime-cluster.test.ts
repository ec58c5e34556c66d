/**
 * The runtime on a real 3-master Redis Cluster: one actor per group, each group's keys on its own
 * slot, messages in all ten groups done.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, recorded, tempDir, useRuntimeCluster, waitFor } from './helpers/runtime.js';

const ground = useRuntimeCluster();

describe('actors on a Redis Cluster', () => {
  it('get messages in all 10 groups done', async () => {
    const queue = new Queue({ cluster: ground.cluster.nodes });
    const launcher = await startActors({
      cluster: ground.cluster.nodes,
      logDir: tempDir(),
      handler: fixture('record.mjs'),
    });
    try {
      expect(launcher.groups).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const perGroup = 30;
      const items = Array.from({ length: 10 * perGroup }, (_, i) => ({
        body: { list: '{fixture}:cluster' },
        options: { group: i % 10, ...(i % 3 === 0 ? { delay: 300 } : {}) },
      }));
      const ids = await queue.addBulk(items);
      const done = await waitFor('every message done', async () => {
        const got = await recorded(ground.client, '{fixture}:cluster');
        return got.length >= ids.length ? got : undefined;
      });
      expect([...done].sort()).toEqual([...ids].sort());

      // Every actor did its own group's share, on its own slot. (A handler records its id just
      // before it returns: `done` counts a moment later.)
      const wanted = Array.from({ length: 10 }, (_, g) => [g, 'ok', perGroup]);
      const shares = await waitFor('every share counted', async () => {
        const stats = await launcher.stats();
        const seen = stats.actors.map((a) => [a.group, a.status, a.stat?.done]);
        return JSON.stringify(seen) === JSON.stringify(wanted) ? seen : undefined;
      });
      expect(shares).toEqual(wanted);
      await waitFor('every ack', async () => {
        const counts = await queue.counts();
        return counts.every((c) => c.delayed + c.ready + c.active + c.dead === 0)
          ? true
          : undefined;
      });
      const slots = await Promise.all(
        Array.from({ length: 10 }, (_, g) => ground.client.cluster('KEYSLOT', `task_group:${g}`)),
      );
      expect(new Set(slots).size).toBe(10);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
