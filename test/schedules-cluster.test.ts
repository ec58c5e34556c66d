/**
 * Schedules on a real 3-master Redis Cluster: schedules in four groups (their slots spread over
 * the masters), two launchers and concurrent upserts; each occurrence handled once, and the
 * schedule's state and its occurrence share the group's slot (one script call changes both).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, recorded, tempDir, useRuntimeCluster } from './helpers/runtime.js';

const ground = useRuntimeCluster();

describe('schedules on a Redis Cluster', () => {
  it('occurrences in four groups, each handled once with two launchers and concurrent upserts', async () => {
    const where = { cluster: ground.cluster.nodes, prefix: 'csched', groups: 6 };
    const queues = [new Queue(where), new Queue(where)];
    const launchers = await Promise.all(
      [0, 1].map(() =>
        startActors({ ...where, logDir: tempDir(), handler: fixture('record.mjs') }),
      ),
    );
    try {
      const groups = [0, 2, 3, 5];
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          queues.flatMap((queue) =>
            groups.map((group) =>
              queue.schedules.upsert(`g${group}`, {
                every: 500,
                group,
                body: { list: '{fixture}:csched' },
              }),
            ),
          ),
        );
      }
      await sleep(4000);
      for (const group of groups) await queues[0]?.schedules.remove(`g${group}`);
      await sleep(300);
      const ids = await recorded(ground.client, '{fixture}:csched');
      expect(new Set(ids).size).toBe(ids.length);
      for (const group of groups) {
        const mine = ids.filter((id) => id.startsWith(`schedule:g${group}:`));
        expect(mine.length).toBeGreaterThanOrEqual(6);
        expect(mine.length).toBeLessThanOrEqual(10);
      }
      expect(await queues[0]?.schedules.list()).toEqual([]);
    } finally {
      await Promise.all(launchers.map((l) => l.stop()));
      await Promise.all(queues.map((q) => q.close()));
    }
  }, 60_000);
});
