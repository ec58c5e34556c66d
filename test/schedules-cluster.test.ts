/**
 * Schedules on a real 3-master Redis Cluster: schedules in four groups (their slots spread over
 * the masters), two launchers and concurrent upserts; each occurrence handled once, and the
 * schedule's state and its occurrence share the group's slot (one script call changes both).
 * An id's placement (its home group's slot) and its schedule (another's) work across masters.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { hashString } from '../src/base/keys.js';
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

  it('an id names one schedule across masters: a move is refused, get and remove find it', async () => {
    const queue = new Queue({ cluster: ground.cluster.nodes, prefix: 'cplace', groups: 6 });
    try {
      // The id's placement lives in its home group's slot, the schedule in another's.
      const home = hashString('schedule:placed') % 6;
      const away = (home + 3) % 6;
      await queue.schedules.upsert('placed', { every: '1h', group: away });
      await expect(queue.schedules.upsert('placed', { every: '1h', group: home })).rejects.toThrow(
        `schedule placed lives in group ${away};`,
      );
      expect((await queue.schedules.upsert('placed', { every: '1h', body: 'b' })).group).toBe(away);
      expect(await queue.schedules.get('placed')).toMatchObject({ group: away, body: 'b' });
      expect(await queue.schedules.preview('placed', { count: 2 })).toHaveLength(2);
      expect(await queue.schedules.remove('placed')).toBe(true);
      expect(await queue.schedules.list()).toEqual([]);
    } finally {
      await queue.close();
    }
  });
});
