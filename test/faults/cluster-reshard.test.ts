/**
 * A live reshard of a 3-master Redis Cluster while messages flow: the slot of group 3 moves to
 * another master (SETSLOT IMPORTING / MIGRATING, MIGRATE … KEYS in small spaced batches, SETSLOT
 * NODE on every master). Producers are long-lived and were connected before the move: a `Queue`
 * with its defaults (the one in this process), and a `skyq produce` reading stdin. While the slot
 * is half-moved every command on it meets TRYAGAIN or ASK; none of that may reach a caller. After
 * the move, adds to group 3, a claim on it and the actors' consumption must work again within
 * RECOVERY_MS. In flight: the leased messages of every group, read right before the move.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashString, keyOf } from '../../src/base/keys.js';
import { Queue } from '../../src/index.js';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from '../helpers/redis.js';
import { removeTempDirs, spawnCli, tempDir } from '../helpers/runtime.js';
import { onNode } from './helpers/cluster.js';
import { startFlow } from './helpers/flow.js';
import { moveSlot } from './helpers/reshard.js';
import { saveCost } from './helpers/results.js';
import {
  expectNoneLost,
  firstClaimedAfter,
  hexOf,
  leasedIds,
  TALLY,
  tokenMarks,
} from './helpers/tally.js';

const PREFIX = 'rs';
const GROUPS = 6;
const MOVED = 3;
/** The bound: from the migration's end to adds to the moved group succeeding again. */
const RECOVERY_MS = 2000;

let cluster: RedisClusterHandle;
let recorder: RedisServerHandle;
let record: Redis;

beforeAll(async () => {
  [cluster, recorder] = await Promise.all([startCluster(), startStandalone()]);
  record = new Redis(recorder.url);
  process.env.SKYQ_TALLY_REDIS = recorder.url;
});

afterAll(async () => {
  record?.disconnect();
  await Promise.all([cluster?.stop(), recorder?.stop()]);
  removeTempDirs();
});

/** The port of the master serving `slot`. */
async function ownerOf(slot: number): Promise<number> {
  const ranges = (await onNode(cluster.nodes[0]?.port as number, (c) =>
    c.call('CLUSTER', 'SLOTS'),
  )) as [number, number, [string, number]][];
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  return (range as [number, number, [string, number]])[2][1];
}

/** A --key whose messages all go to `group` (add-options.ts: hashString(key) % groups). */
function keyFor(group: number): string {
  for (let n = 0; ; n++) if (hashString(`k${n}`) % GROUPS === group) return `k${n}`;
}

/** Polls until `found()` holds; the time it first held, or Infinity after `withinMs`. */
async function firstTime(found: () => boolean | Promise<boolean>, withinMs: number) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (await found()) return Date.now();
    await sleep(10);
  }
  return Number.POSITIVE_INFINITY;
}

const groupOf = (id: string) => Number(id.slice(0, id.indexOf(':')));

describe('live reshard of a cluster slot', () => {
  it('producers, claims and actors carry on through the move: 0 lost, none refused', async () => {
    const where = { cluster: cluster.nodes, prefix: PREFIX, groups: GROUPS };
    const queue = new Queue(where);
    // Another long-lived Queue, connected before the move too, that only claims.
    const claimer = new Queue(where);
    const seeds = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    const cli = spawnCli([
      ...['produce', '--cluster', seeds, '--prefix', PREFIX, '--groups', String(GROUPS)],
      ...['--key', keyFor(MOVED), '--delay', '0'],
    ]);
    const cliIds = () => [...cli.stdout().matchAll(/^added (\S+)$/gm)].map((m) => m[1] as string);
    let lines = 0;
    const feeder = setInterval(() => cli.child.stdin?.write(`line ${++lines}\n`), 40);
    let launcher: Launcher | undefined;
    try {
      await Promise.all([queue.ready(), claimer.ready()]);
      launcher = await startActors({
        ...where,
        handler: TALLY,
        logDir: tempDir(),
        publishStats: false,
        concurrency: 50,
      });
      const flow = startFlow(queue, { batch: 12, everyMs: 30, body: { ms: 5 } });
      await sleep(1500);
      expect(cliIds().length).toBeGreaterThan(0);

      const slot = calculateSlot(keyOf(PREFIX, MOVED, 'delayed'));
      const from = await ownerOf(slot);
      const ports = cluster.nodes.map((n) => n.port).filter((p) => p !== from);
      const [to, ...others] = ports as [number, ...number[]];
      const [leased, marks] = await Promise.all([
        leasedIds(queue.client, PREFIX, GROUPS),
        tokenMarks(queue.client, PREFIX, GROUPS),
      ]);
      // One key every 300 ms: half-moved for longer than ioredis's own retries last (1.6 s).
      const move = await moveSlot(slot, from, to, others, { batch: 1, pauseMs: 300 });
      const flowMark = flow.acked.length;
      const cliMark = cliIds().length;
      expect(await ownerOf(slot)).toBe(to);

      // Each producer's first acknowledged add to the moved group after the move ended.
      const [queueBack, cliBack, claimBack] = await Promise.all([
        firstTime(() => flow.acked.slice(flowMark).some((id) => groupOf(id) === MOVED), 10_000),
        firstTime(() => cliIds().slice(cliMark).length > 0, 10_000),
        firstTime(async () => {
          const claimed = await claimer.claim(MOVED, 1, 10_000).catch(() => null);
          if (claimed === null) return false;
          await claimer.release(claimed);
          return true;
        }, 10_000),
      ]);
      await sleep(1500);
      await flow.stop();
      clearInterval(feeder);
      cli.child.stdin?.end('quit\n');
      const ended = await cli.done;

      const acked = [...flow.acked, ...cliIds()].map(hexOf);
      const { finishes, result } = await expectNoneLost(record, acked, leased);
      const consumedAt = firstClaimedAfter(finishes, marks, [MOVED], move.endedAt);
      const sinceEnd = (at: number) => Math.round(at - move.endedAt);
      const figures = {
        move,
        queueBackMs: sinceEnd(queueBack),
        cliBackMs: sinceEnd(cliBack),
        claimBackMs: sinceEnd(claimBack),
        consumedMs: sinceEnd(consumedAt),
        refused: flow.refused(),
        cliStderr: ended.stderr,
      };
      console.log(`reshard: ${JSON.stringify(figures)}`);
      // TRYAGAIN and ASK while the slot moved were retried, not handed to a caller.
      expect(flow.refused()).toBe(0);
      expect(ended.stderr).not.toMatch(/refused/);
      expect(ended.code).toBe(0);
      expect(sinceEnd(queueBack)).toBeLessThan(RECOVERY_MS);
      expect(sinceEnd(cliBack)).toBeLessThan(RECOVERY_MS);
      expect(sinceEnd(claimBack)).toBeLessThan(RECOVERY_MS);
      expect(sinceEnd(consumedAt)).toBeLessThan(RECOVERY_MS);
      saveCost({
        key: '04a-cluster-reshard',
        fault: `live reshard of group ${MOVED}'s slot to another master of a 3-master Redis Cluster (MIGRATING/IMPORTING, MIGRATE … KEYS, SETSLOT NODE)`,
        messages: acked.length,
        inFlight: leased.size,
        recoveryMs: Math.round(consumedAt - move.startedAt),
        allBackMs: null,
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes:
          `the slot was half-moved for ${move.endedAt - move.startedAt} ms (${move.keys} keys); ` +
          `after its end, adds to group ${MOVED} were acknowledged again within ${sinceEnd(queueBack)} ms ` +
          `(long-lived Queue) and ${sinceEnd(cliBack)} ms (skyq produce), a claim within ` +
          `${sinceEnd(claimBack)} ms, the actors consumed within ${sinceEnd(consumedAt)} ms; ` +
          `${flow.refused()} adds refused (TRYAGAIN and ASK retried, not handed to callers)`,
      });
    } finally {
      clearInterval(feeder);
      cli.child.kill('SIGKILL');
      await launcher?.stop();
      await Promise.all([queue.close(), claimer.close()]);
    }
  });
});
