/**
 * kill -9 of a `skyq start` launcher at random moments while flows complete (2 s leases): flows
 * of depth 3 (21 nodes each, a third of them in another slot than their parent) added before
 * and all along, three kills, a new launcher started after each. Whatever the kill cut between a child's ack and its
 * parent's update (an outbox entry not relayed yet, a relay not cleared), the new launcher's
 * sweeps finish it: 0 parents lost, none started before its last child finished, each saw
 * every child done, and only what was leased at a kill ran twice.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type FlowIds, Queue } from '../../src/index.js';
import { nodesOf } from '../helpers/flows.js';
import { type CliChild, tempDir, waitFor } from '../helpers/runtime.js';
import {
  expectFlowsHeld,
  explainingUnfinished,
  flowLeftovers,
  spreadFlow,
} from './helpers/flows.js';
import { killHard, startSkyq, stopGracefully } from './helpers/processes.js';
import { saveCost } from './helpers/results.js';
import { useFaultServers } from './helpers/servers.js';
import {
  expectNoneLost,
  firstClaimedAfter,
  hexOf,
  lastFinishOf,
  leasedIds,
  TALLY,
  tokenMarks,
} from './helpers/tally.js';

const servers = useFaultServers();

/** Outcomes waiting in the groups' outboxes for a relay (or its confirmation). */
async function outboxEntries(queue: Queue): Promise<number> {
  const left = await flowLeftovers(queue, PREFIX, GROUPS);
  return left.reduce((sum, { outbox }) => sum + outbox, 0);
}
const PREFIX = 'fk';
const GROUPS = 4;
const FLOWS = 40;
const KILLS = 3;

describe('kill -9 of a launcher while flows complete', () => {
  it('0 parents lost, none early, none released twice: only the leased run again', async () => {
    const where = { redis: servers.queue.url, prefix: PREFIX, groups: GROUPS };
    const queue = new Queue(where);
    const args = ['--redis', servers.queue.url, '--prefix', PREFIX, '--groups', String(GROUPS)];
    args.push('--lease', '2s', '--concurrency', '20', '--handler', TALLY);
    const launchers: CliChild[] = [];
    const flows: FlowIds[] = [];
    const leased = new Set<string>();
    const kills: {
      at: number;
      after: number;
      leased: Set<string>;
      marks: number[];
      outbox: number;
    }[] = [];
    try {
      await queue.ready();
      const body = { ms: 30 };
      // A lease a kill cut short is a delivery spent: a job leased at every kill must have one
      // left after them, or it dies as it should ("lease expired on the last of 3 attempts") and
      // its ancestors with it. The launchers lease 80 at a time, the oldest first, so on a busy
      // machine the same few were leased at all three kills (2 runs of ~20 beside another file).
      const attempts = KILLS + 1;
      for (let f = 0; f < FLOWS / 2; f++)
        flows.push(await queue.flows.add(spreadFlow(f, GROUPS, body, attempts)));
      // More flows keep coming until the last launcher starts, so each kill lands mid-run.
      let producing = true;
      const producer = (async () => {
        for (let f = FLOWS / 2; producing || f < FLOWS; f++) {
          flows.push(await queue.flows.add(spreadFlow(f, GROUPS, body, attempts)));
          await sleep(40);
        }
      })();
      for (let k = 0; k <= KILLS; k++) {
        const run = await startSkyq([...args, '--log-dir', tempDir()], servers.env);
        launchers.push(run);
        if (k === KILLS) break;
        // A random moment: flows are mid-way, children acking and parents being released.
        const after = 300 + Math.floor(Math.random() * 1200);
        await sleep(after);
        const at = Date.now();
        await killHard(run);
        const [now, marks, outbox] = await Promise.all([
          leasedIds(queue.client, PREFIX, GROUPS),
          tokenMarks(queue.client, PREFIX, GROUPS),
          outboxEntries(queue),
        ]);
        for (const id of now) leased.add(id);
        kills.push({ at, after, leased: now, marks, outbox });
      }
      producing = false;
      await producer;
      const ids = flows.flatMap((flow) => nodesOf(flow).map(({ node }) => node.id));
      const { finishes, result } = await explainingUnfinished(queue, flows, PREFIX, GROUPS, () =>
        expectNoneLost(servers.record, ids.map(hexOf), leased),
      );
      expect(result.unexpected).toBe(0);
      const held = expectFlowsHeld(flows, finishes, leased);
      expect(kills.every((kill) => kill.leased.size > 0)).toBe(true); // each kill landed mid-run

      // Nothing left behind: no parent waits, and the sweeps emptied every outbox.
      await waitFor(
        'no parent waiting and every outbox empty',
        async () => {
          const left = await flowLeftovers(queue, PREFIX, GROUPS);
          return left.every(({ outbox, waiting }) => outbox + waiting === 0) ? true : undefined;
        },
        20_000,
        200,
      );
      const first = kills[0] as (typeof kills)[number];
      saveCost({
        key: '01c-flows-kill',
        fault: `kill -9 of a \`skyq start\` launcher ${KILLS} times at random moments while ${flows.length} flows of depth 3 (21 jobs each) complete (lease 2 s)`,
        messages: ids.length,
        inFlight: leased.size,
        recoveryMs: Math.round(firstClaimedAfter(finishes, first.marks) - first.at),
        allBackMs: Math.round(
          Math.max(...kills.map((kill) => lastFinishOf(finishes, kill.leased) - kill.at)),
        ),
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes:
          `${held.parents} parents: 0 lost, 0 started before their last child finished (closest ${Math.round(held.closestMs)} ms after), ` +
          `${held.parentsTwice} ran twice, each leased at a kill and run again as its next attempt (at-least-once, never released twice); ` +
          `outbox entries left at the kills: ${kills.map((kill) => kill.outbox).join(', ')}; kills ${kills.map((kill) => kill.after).join(', ')} ms after each start`,
      });
      const stopped = await stopGracefully(launchers.at(-1) as CliChild);
      expect(stopped.code).toBe(0);
    } finally {
      for (const run of launchers) run.child.kill('SIGKILL');
      await queue.close();
    }
  });
});
