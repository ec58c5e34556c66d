/**
 * Servers set up unlike the tests' own (issue 13): a Redis that is full, and a launcher whose
 * clock is off from Redis's. Every message id is counted through the tally fixture.
 * - Full: maxmemory 8 MB. On allkeys-lru the launcher refuses to start (an evicting policy
 *   deletes queued messages). On noeviction, 1 KB adds go in until Redis refuses them with OOM;
 *   then a launcher drains the queue and adds go in again. Recovery: from the first refused add
 *   to the first add accepted again.
 * - Clock: the launcher's clock runs 10 s behind Redis's (its clock source is skewed: Debian's
 *   libfaketime deadlocks redis-server's jemalloc); `runAt` messages are due on Redis's clock.
 *   Recovery here is how long the launcher took to say so.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { type Launcher, Queue } from '../../src/index.js';
import { startActors } from '../../src/start.js';
import { tempDir } from '../helpers/runtime.js';
import { saveCost } from './helpers/results.js';
import { useFaultServers } from './helpers/servers.js';
import { account, expectNoneLost, hexOf, readFinishes, TALLY } from './helpers/tally.js';

const servers = useFaultServers({ extraArgs: ['--maxmemory', '8mb'] });
const GROUPS = 4;
const BODY = 'x'.repeat(1024);

describe('a Redis that is full', () => {
  it('allkeys-lru refuses the start; noeviction refuses adds with OOM and loses nothing', async () => {
    const admin = new Redis(servers.queue.url);
    const prefix = 'full';
    // The history keeps finished jobs, bodies included (1,000 a group by default: 4 MB of 1 KB
    // bodies here, with ~0.9 MB of this 8 MB server taken by the scripts alone). On a machine
    // where OOM came after ~4,100 adds, the drain freed nothing and adds never went in again.
    // This test is about the OOM path: a short history leaves the drained room free.
    const keepDone = { count: 50 };
    const queue = new Queue({
      redis: servers.queue.url,
      prefix,
      groups: GROUPS,
      warnEviction: false,
      keepDone,
    });
    let launcher: Launcher | null = null;
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      const asked = Date.now();
      const refusal = await startActors({
        redis: servers.queue.url,
        prefix,
        groups: GROUPS,
        logDir: tempDir(),
      })
        .then(async (started) => {
          await started.stop(0);
          return null;
        })
        .catch((error: Error & { code?: string }) => error);
      const refusedInMs = Date.now() - asked;
      expect(refusal?.code).toBe('ERR_SKYQ_EVICTION');
      await admin.config('SET', 'maxmemory-policy', 'noeviction');

      // The launcher runs while Redis fills up, paused so that it lets it fill. (Started on a
      // Redis that is already full, an actor fails to start: its start-up writes are refused.)
      launcher = await startActors({
        redis: servers.queue.url,
        prefix,
        groups: GROUPS,
        handler: TALLY,
        logDir: tempDir(),
        concurrency: 50,
        publishStats: false,
        paused: true,
        keepDone,
      });
      // Fill it: batches of 100 until Redis says OOM.
      const acked: string[] = [];
      let refused = 0;
      let firstRefusalAt = 0;
      const due = () => ({ delay: 2000 + Math.floor(Math.random() * 1000) });
      for (let batch = 0; batch < 400 && refused === 0; batch++) {
        const items = Array.from({ length: 100 }, () => ({ body: BODY, options: due() }));
        try {
          acked.push(...(await queue.addBulk(items)));
        } catch (error) {
          const partial = error as Error & { ids?: (string | null)[] };
          expect(partial.message).toMatch(/OOM/);
          acked.push(...(partial.ids ?? []).filter((id): id is string => id !== null));
          refused += (partial.ids ?? []).filter((id) => id === null).length || items.length;
          firstRefusalAt = Date.now();
        }
      }
      expect(refused).toBeGreaterThan(0);

      await launcher.resume();
      // Adds go in again once the actors have made room.
      let recoveredAt = 0;
      for (let tries = 0; tries < 600 && recoveredAt === 0; tries++) {
        try {
          acked.push(await queue.add(BODY));
          recoveredAt = Date.now();
        } catch {
          refused++;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      expect(recoveredAt).toBeGreaterThan(0);
      const { result } = await expectNoneLost(servers.record, acked.map(hexOf), new Set());
      expect(result.duplicates).toBe(0);
      saveCost({
        key: '04m-redis-full',
        fault:
          'Redis full (maxmemory 8 MB) while 1 KB adds go in: allkeys-lru refuses the start; on noeviction adds are refused with OOM until a launcher drains the queue',
        messages: acked.length,
        inFlight: 0,
        recoveryMs: recoveredAt - firstRefusalAt,
        allBackMs: null,
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes: `allkeys-lru: start refused in ${refusedInMs} ms, naming the policy and the fix; noeviction: ${refused} adds refused with OOM (not acknowledged), every acknowledged one handled`,
      });
    } finally {
      await launcher?.stop(0);
      await queue.close();
      await admin.flushall();
      admin.disconnect();
    }
  });
});

describe('a launcher whose clock is 10 s behind Redis', () => {
  it('says so once, and runAt messages start on Redis clock: none early, 0 lost', async () => {
    const prefix = 'skew';
    const queue = new Queue({ redis: servers.queue.url, prefix, groups: GROUPS });
    const warnings: number[] = [];
    const listener = (warning: Error & { code?: string }) => {
      if (warning.code === 'SKYQ_CLOCK_SKEW') warnings.push(Date.now());
    };
    process.on('warning', listener);
    let launcher: Launcher | null = null;
    try {
      await queue.ready();
      const before = (await readFinishes(servers.record)).length;
      const started = Date.now();
      launcher = await startActors({
        redis: servers.queue.url,
        prefix,
        groups: GROUPS,
        handler: TALLY,
        logDir: tempDir(),
        publishStats: false,
        wallClock: () => Date.now() - 10_000,
      });
      const now = await queue.clock(0).now();
      const dueById = new Map<string, number>();
      const items = Array.from({ length: 400 }, (_, i) => ({
        body: `m${i}`,
        options: { runAt: now + 1000 + (i % 100) * 10 },
      }));
      const ids = await queue.addBulk(items);
      for (const [i, id] of ids.entries())
        dueById.set(hexOf(id), items[i]?.options.runAt as number);
      const { finishes, result } = await expectNoneLost(
        servers.record,
        [...dueById.keys()],
        new Set(),
      );
      const early = finishes
        .slice(before)
        .filter((f) => dueById.has(f.h) && f.s < (dueById.get(f.h) as number));
      expect(early).toEqual([]);
      expect(warnings).toHaveLength(1);
      const skew = launcher.servers()[0]?.skewMs ?? 0;
      expect(Math.abs(skew - 10_000)).toBeLessThan(500);
      expect(account(dueById.keys(), finishes).duplicates).toBe(0);
      saveCost({
        key: '04s-clock-skew',
        fault:
          "a launcher whose clock is 10 s behind Redis's (its clock source skewed), 400 runAt messages due 1–2 s later",
        messages: dueById.size,
        inFlight: 0,
        recoveryMs: (warnings[0] as number) - started,
        allBackMs: null,
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes: `recovery: the launcher logged and warned the ${(skew / 1000).toFixed(1)} s skew once, this long after its start; ${early.length} messages started before their due time on Redis's clock`,
      });
    } finally {
      process.off('warning', listener);
      await launcher?.stop(0);
      await queue.close();
    }
  });
});
