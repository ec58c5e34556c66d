/**
 * kill -9 of a `skyq start` launcher mid-run, with a 2 s lease; a new launcher is started at once
 * and finishes the work. What was leased when the launcher died (its active-set members, read
 * after it was gone and before any lease could expire) may run twice; nothing is lost.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { type CliChild, tempDir, waitFor } from '../helpers/runtime.js';
import { ackedAfter, startFlow } from './helpers/flow.js';
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
const PREFIX = 'lk';
const GROUPS = 4;
const BACKLOG = 3000;

describe('kill -9 of a launcher', () => {
  it('a new launcher finishes the work: 0 lost, duplicates only among the leased', async () => {
    const where = { redis: servers.queue.url, prefix: PREFIX, groups: GROUPS };
    const queue = new Queue(where);
    const args = ['--redis', servers.queue.url, '--prefix', PREFIX, '--groups', String(GROUPS)];
    args.push('--lease', '2s', '--concurrency', '50', '--handler', TALLY);
    const launchers: CliChild[] = [];
    try {
      await queue.ready();
      const now = await queue.clock(0).now();
      const backlog = await queue.addBulk(
        Array.from({ length: BACKLOG }, (_, i) => ({
          body: { ms: 20 },
          options: { runAt: now + (i / BACKLOG) * 3000 },
        })),
      );
      const first = await startSkyq([...args, '--log-dir', tempDir()], servers.env);
      launchers.push(first);
      const flow = startFlow(queue, { batch: 10, everyMs: 50, body: { ms: 20 } });
      await waitFor('40 % done', async () =>
        (await servers.record.llen('done')) >= BACKLOG * 0.4 ? true : undefined,
      );

      const faultAt = Date.now();
      await killHard(first);
      // The dead launcher's leases: nothing changes them until they expire (2 s from now at most).
      const [leased, marks] = await Promise.all([
        leasedIds(queue.client, PREFIX, GROUPS),
        tokenMarks(queue.client, PREFIX, GROUPS),
      ]);
      launchers.push(await startSkyq([...args, '--log-dir', tempDir()], servers.env));
      await waitFor('the leases to come back', async () => {
        const counts = await queue.counts();
        return counts.every((c) => c.active < 50) && Date.now() - faultAt > 3000 ? true : undefined;
      });
      // The producer (this process) must keep being acknowledged after the kill, within 5 s.
      await ackedAfter(flow, faultAt, 5000);
      await flow.stop();

      const acked = [...backlog, ...flow.acked];
      const { finishes, result } = await expectNoneLost(servers.record, acked.map(hexOf), leased);
      expect(result.unexpected).toBe(0);
      expect(leased.size).toBeGreaterThan(0); // the kill did land mid-run

      const recoveryMs = firstClaimedAfter(finishes, marks) - faultAt;
      saveCost({
        key: '01-launcher-kill',
        fault: 'kill -9 of a `skyq start` launcher at 40 % (lease 2 s), a new one started at once',
        messages: acked.length,
        inFlight: leased.size,
        recoveryMs: Math.round(recoveryMs),
        allBackMs: Math.round(lastFinishOf(finishes, leased) - faultAt),
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes: 'recovery includes starting the new launcher (a Node process and 4 actor threads)',
      });
      const stopped = await stopGracefully(launchers[1] as CliChild);
      expect(stopped.code).toBe(0);
      const counts = await queue.counts();
      expect(counts.map((c) => c.delayed + c.ready + c.active + c.dead)).toEqual([0, 0, 0, 0]);
    } finally {
      for (const run of launchers) run.child.kill('SIGKILL');
      await queue.close();
    }
  });
});
