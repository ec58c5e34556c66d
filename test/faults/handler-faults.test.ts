/**
 * Handlers that end their thread (process.exit), throw, hang (never settle, and block the event
 * loop) and run out of memory, each in a group of its own, while messages flow through every
 * group. The launcher runs in a child process with a 128 MB heap limit, which its actor threads
 * share, so the allocating handler dies fast. Its supervisor restarts the dead or hung actors;
 * their leases (2 s) run out and the messages come back.
 * In flight: the group's leased messages, read by the handler just before it faulted.
 * Recovery: from the fault to the first message started in that group by a live thread (for a
 * throw, the same thread; otherwise the restarted one).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { type CliChild, tempDir, waitFor } from '../helpers/runtime.js';
import { ackedAfter, startFlow } from './helpers/flow.js';
import { startLauncherChild, stopGracefully } from './helpers/processes.js';
import { saveCost } from './helpers/results.js';
import { useFaultServers } from './helpers/servers.js';
import {
  account,
  type Finish,
  type HandlerFault,
  hexOf,
  readFaults,
  TALLY,
  waitAllFinished,
} from './helpers/tally.js';

const servers = useFaultServers();
const PREFIX = 'hf';
const FAULTS = ['exit', 'throw', 'hang', 'oom'] as const; // group g gets FAULTS[g]
const KILLS_THREAD = new Set(['exit', 'hang', 'oom']);
const WHAT: Record<(typeof FAULTS)[number], string> = {
  exit: 'a handler calls process.exit(1): its actor thread ends',
  throw: 'a handler throws',
  hang: 'a handler spins for good (no --timeout can fire): the supervisor ends the hung thread',
  oom: 'a handler allocates until the heap limit ends its actor thread',
};

describe('handlers that exit, throw, hang and run out of memory', () => {
  it('cost their group a restart at most: 0 lost, duplicates only among its leased', async () => {
    const groups = FAULTS.length;
    const queue = new Queue({
      redis: servers.queue.url,
      prefix: PREFIX,
      groups,
      backoff: { type: 'fixed', delay: 200 },
    });
    const logDir = tempDir();
    let launcher: CliChild | undefined;
    try {
      await queue.ready();
      launcher = await startLauncherChild(
        {
          redis: servers.queue.url,
          prefix: PREFIX,
          groups,
          handler: TALLY,
          logDir,
          publishStats: false,
          concurrency: 20,
          leaseMs: 2000,
          hangTimeoutMs: 2000,
        },
        { ...servers.env, SKYQ_TALLY_QUEUE: servers.queue.url, SKYQ_TALLY_PREFIX: PREFIX },
        ['--max-old-space-size=128'],
      );
      const flow = startFlow(queue, { batch: 8, everyMs: 20, body: { ms: 40 } });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const faulty = await queue.addBulk(
        FAULTS.map((fault, group) => ({ body: { fault }, options: { group } })),
      );
      const faults = await waitFor('every fault', async () => {
        const seen = await readFaults(servers.record);
        return seen.length === FAULTS.length ? seen : undefined;
      });
      const faultsOverAt = Date.now();
      await waitAllFinished(servers.record, faulty.map(hexOf), 30_000);
      // The producer must still be acknowledged once the handlers' faults are over, within 5 s.
      await ackedAfter(flow, faultsOverAt, 5000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await flow.stop();

      const acked = [...flow.acked, ...faulty].map(hexOf);
      const finishes = await waitAllFinished(servers.record, acked, 60_000);
      const result = account(acked, finishes);
      expect(result.lost).toEqual([]);
      expect(result.unexpected).toBe(0);
      for (const fault of faults) {
        const group = fault.g;
        const kind = FAULTS[group] as (typeof FAULTS)[number];
        expect(fault.kind).toBe(kind);
        const inGroup = finishes.filter((f) => f.g === group);
        const duplicates = account(new Set(inGroup.map((f) => f.h)), inGroup).duplicates;
        expect(duplicates).toBeLessThanOrEqual(fault.leased);
        const recoveredAt = firstLiveStart(inGroup, fault);
        const faultyDone = inGroup.find((f) => f.h === fault.h) as Finish;
        expect(recoveredAt).toBeLessThan(Number.POSITIVE_INFINITY);
        saveCost({
          key: `0${5 + group}-handler-${kind}`,
          fault: WHAT[kind],
          messages: acked.length,
          inFlight: fault.leased,
          recoveryMs: Math.round(recoveredAt - fault.t),
          allBackMs: Math.max(0, Math.round(faultyDone.t - fault.t)),
          duplicates,
          lost: result.lost.filter((h) => inGroup.some((f) => f.h === h)).length,
          notes: `all back: the faulty message itself finished (attempt ${faultyDone.a})`,
        });
      }
      // The launcher saw each dead or hung thread, and only those, and said why.
      const crashes = readFileSync(join(logDir, 'launcher.log'), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"event":"crash"'))
        .map((line) => JSON.parse(line) as { group: number; reason: string });
      expect(new Set(crashes.map((c) => c.group))).toEqual(
        new Set(FAULTS.flatMap((f, g) => (KILLS_THREAD.has(f) ? [g] : []))),
      );
      expect(crashes.find((c) => c.group === 2)?.reason).toMatch(/hung/);
      expect(crashes.find((c) => c.group === 3)?.reason).toMatch(/memory/i);
      expect((await stopGracefully(launcher)).code).toBe(0);
    } finally {
      launcher?.child.kill('SIGKILL');
      await queue.close();
    }
  });
});

/** When the group worked again: its first start after the fault on a thread that is alive. */
function firstLiveStart(inGroup: readonly Finish[], fault: HandlerFault): number {
  const killed = KILLS_THREAD.has(fault.kind);
  let first = Number.POSITIVE_INFINITY;
  for (const f of inGroup) {
    if (f.s > fault.t && (!killed || f.th !== fault.th) && f.s < first) first = f.s;
  }
  return first;
}
