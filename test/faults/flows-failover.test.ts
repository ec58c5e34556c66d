/**
 * Failover of a master in a 3-master + 3-replica Redis Cluster (cluster-node-timeout 1 s) while
 * flows of depth 3 spread over every master complete: kill -9 of the master holding group 0,
 * its replica takes over. Children's outcomes cross between the masters all along (the outbox
 * of the child's slot, relayed into the parent's); a relay into the dead master fails and is
 * sent again, an outbox entry is cleared only once a later relay found it recorded (so a write
 * the old master acknowledged and never replicated would be repaired). A flows.add that failed
 * part-way is completed by its retry() once the replica took over. 0 parents lost, none
 * started before its last child finished, each saw every child done.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '../../src/base/keys.js';
import { FlowAddError, type FlowIds, Queue } from '../../src/index.js';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import { nodesOf } from '../helpers/flows.js';
import { type RedisServerHandle, startStandalone } from '../helpers/redis.js';
import { removeTempDirs, tempDir, waitFor } from '../helpers/runtime.js';
import {
  type ClusterNodeInfo,
  onNode,
  type ReplicatedCluster,
  startReplicatedCluster,
} from './helpers/cluster.js';
import {
  expectFlowsHeld,
  explainingUnfinished,
  flowLeftovers,
  spreadFlow,
} from './helpers/flows.js';
import { saveCost } from './helpers/results.js';
import {
  expectNoneLost,
  firstClaimedAfter,
  hexOf,
  leasedIds,
  TALLY,
  tokenMarks,
} from './helpers/tally.js';

const PREFIX = 'ff';
const GROUPS = 6;

let cluster: ReplicatedCluster;
let recorder: RedisServerHandle;
let record: Redis;

beforeAll(async () => {
  [cluster, recorder] = await Promise.all([startReplicatedCluster(1000), startStandalone()]);
  record = new Redis(recorder.url);
  process.env.SKYQ_TALLY_REDIS = recorder.url;
});

afterAll(async () => {
  record?.disconnect();
  await Promise.all([cluster?.stop(), recorder?.stop()]);
  removeTempDirs();
});

/** The groups whose slot `master` serves. */
async function groupsOf(master: ClusterNodeInfo): Promise<number[]> {
  const ranges = (await onNode(master.port, (c) => c.call('CLUSTER', 'SLOTS'))) as [
    number,
    number,
    [string, number],
  ][];
  const mine = ranges.filter(([, , [, port]]) => port === master.port);
  return Array.from({ length: GROUPS }, (_, g) => g).filter((g) => {
    const slot = calculateSlot(keyOf(PREFIX, g, 'delayed'));
    return mine.some(([from, to]) => slot >= from && slot <= to);
  });
}

describe('failover of a cluster master while flows complete', () => {
  it('the replica takes over: 0 parents lost, none early', async () => {
    const where = { cluster: cluster.seeds, prefix: PREFIX, groups: GROUPS };
    const queue = new Queue(where);
    let launcher: Launcher | undefined;
    const flows: FlowIds[] = [];
    const unfinished: FlowAddError[] = [];
    let refused = 0;
    try {
      await queue.ready();
      launcher = await startActors({
        ...where,
        handler: TALLY,
        logDir: tempDir(),
        publishStats: false,
        concurrency: 30,
      });
      let producing = true;
      const producer = (async () => {
        for (let f = 0; producing; f++) {
          try {
            flows.push(await queue.flows.add(spreadFlow(f, GROUPS, { ms: 10 })));
          } catch (error) {
            // Part-way: completed below by retry(). Before anything was written: not acknowledged.
            if (error instanceof FlowAddError) unfinished.push(error);
            else refused++;
          }
          await sleep(60);
        }
      })();
      await sleep(1500);

      const index = (
        await Promise.all(cluster.masters.map(async (m) => (await groupsOf(m)).includes(0)))
      ).indexOf(true);
      const master = cluster.masters[index] as ClusterNodeInfo;
      const replica = cluster.replicas[index] as ClusterNodeInfo;
      const affected = await groupsOf(master);
      const faultAt = Date.now();
      const [leased, marks] = await Promise.all([
        leasedIds(queue.client, PREFIX, GROUPS),
        tokenMarks(queue.client, PREFIX, GROUPS),
      ]);
      process.kill(master.pid, 'SIGKILL');
      const promotedAt = await waitFor(
        'the replica to become master',
        () =>
          onNode(replica.port, async (c) =>
            ((await c.call('ROLE')) as string[])[0] === 'master' ? Date.now() : undefined,
          ).catch(() => undefined),
        30_000,
        50,
      );
      const before = flows.length;
      await waitFor(
        'a flow added after the promotion',
        () => (flows.length > before + 2 ? true : undefined),
        15_000,
        50,
      );
      await sleep(2000);
      producing = false;
      await producer;
      // The flows whose add failed part-way: retry() completes each under its ids.
      for (const error of unfinished) {
        flows.push(
          await waitFor(
            'a retry to go through',
            () => error.retry().catch(() => undefined),
            15_000,
            200,
          ),
        );
      }

      const ids = flows.flatMap((flow) => nodesOf(flow).map(({ node }) => node.id));
      const { finishes, result } = await explainingUnfinished(queue, flows, PREFIX, GROUPS, () =>
        expectNoneLost(record, ids.map(hexOf), leased),
      );
      const held = expectFlowsHeld(flows, finishes, leased);
      const resumedAt = firstClaimedAfter(finishes, marks, affected, promotedAt);
      expect(resumedAt).toBeLessThan(Number.POSITIVE_INFINITY);
      // Nothing left waiting once the sweeps confirmed every relay.
      await waitFor(
        'no parent waiting and every outbox empty',
        async () => {
          const left = await flowLeftovers(queue, PREFIX, GROUPS);
          return left.every(({ outbox, waiting }) => outbox + waiting === 0) ? true : undefined;
        },
        30_000,
        200,
      );
      saveCost({
        key: '04f-flows-failover',
        fault: `kill -9 of a master of a 3 + 3 Redis Cluster while ${flows.length} flows of depth 3 over every master complete; its replica takes over`,
        messages: ids.length,
        inFlight: leased.size,
        recoveryMs: Math.round(resumedAt - faultAt),
        allBackMs: null,
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes:
          `replica promoted ${promotedAt - faultAt} ms after the kill; ${held.parents} parents: 0 lost, 0 started before their last child ` +
          `finished (closest ${Math.round(held.closestMs)} ms after), ${held.parentsTwice} ran twice (leased at the kill); ` +
          `${unfinished.length} flows.add failed part-way and were completed by retry(); ${refused} refused before writing anything (not acknowledged)`,
      });
    } finally {
      await launcher?.stop();
      await queue.close();
    }
  });
});
