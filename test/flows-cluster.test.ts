/**
 * Flows on a real 3-master Redis Cluster: a tree of depth 3 with 100 leaves spread over the ten
 * groups (so over every master): every parent runs once, after its last child, with its
 * children in order, their outcomes relayed across slots (the outbox, relayed by the client
 * that acked and by the actors' sweeps).
 */
import calculateSlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { expectFlowRan, type FlowRun, tree3 } from './helpers/flows.js';
import { fixture, tempDir, useRuntimeCluster, waitFor } from './helpers/runtime.js';

const ground = useRuntimeCluster();

describe('flows on a Redis Cluster', () => {
  it('a depth-3 tree of 100 leaves over every master: every parent once, after its children', async () => {
    const where = { cluster: ground.cluster.nodes, prefix: 'fc' };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      logDir: tempDir(),
      handler: fixture('flow-record.mjs'),
    });
    try {
      // The root in group 0, the middle level by key, the leaves round the groups.
      const spec = tree3(10, (level, i) =>
        level === 1 ? { group: 0 } : level === 2 ? { key: `mid-${i}` } : { group: i % 10 },
      );
      const ids = await queue.flows.add(spec);
      const runs = await waitFor(
        'the root to run',
        async () => {
          const got = (await ground.client.lrange('flow:runs', 0, -1)).map(
            (l) => JSON.parse(l) as FlowRun,
          );
          return got.some((run) => run.id === ids.id) ? got : undefined;
        },
        60_000,
      );
      expectFlowRan(ids, runs);
      const groups = new Set(runs.map((run) => run.g));
      expect(groups.size).toBe(10);
      // Ten groups on three masters: the flow crossed them all.
      const ranges = (await ground.client.cluster('SLOTS')) as unknown as [
        number,
        number,
        [string, number],
      ][];
      const masters = new Set(
        [...groups].map((g) => {
          const slot = calculateSlot(keyOf('fc', g, 'delayed'));
          return ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
        }),
      );
      expect(masters.size).toBe(3);
      // Nothing is left to relay once the sweeps confirmed every outcome.
      await waitFor(
        'every outbox empty',
        async () => {
          const sizes = await Promise.all(
            Array.from({ length: 10 }, (_, g) => ground.client.hlen(keyOf('fc', g, 'outbox'))),
          );
          return sizes.every((n) => n === 0) ? true : undefined;
        },
        20_000,
        200,
      );
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
