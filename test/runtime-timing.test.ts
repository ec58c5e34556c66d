/**
 * Lateness sanity check: 1,000 messages due over one second are all consumed, and the median
 * lateness the actors measured is below 200 ms. Generous on purpose; the real figures come from
 * the benchmarks. A burst of load from elsewhere on a small machine (other suites start threads
 * and processes) can starve every thread for a moment, so a run that misses gets up to two more
 * tries with a fresh launcher: a real timing fault misses every time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import type { LauncherStats } from '../src/runtime/launcher-stats.js';
import { startActors } from '../src/start.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { noteRetry } from './helpers/retry-log.js';
import { removeTempDirs, tempDir, waitFor } from './helpers/runtime.js';

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

const TOTAL = 1000;
const GROUPS = 4;

/** One run on a fresh prefix and launcher; the launcher's figures at the end. */
async function run(prefix: string): Promise<LauncherStats> {
  const where = { redis: server.url, prefix, groups: GROUPS };
  const queue = new Queue(where);
  // The default handler: logs each message as consumed.
  const launcher = await startActors({ ...where, logDir: tempDir(), publishStats: false });
  try {
    await queue.ready();
    const start = Date.now() + 500;
    await queue.addBulk(
      Array.from({ length: TOTAL }, (_, i) => ({ body: `m${i}`, options: { runAt: start + i } })),
    );
    // Polls Redis, not launcher.stats(): merging every actor's histogram costs CPU the actors
    // need. The figures are read once, at the end.
    await waitFor(
      'every message consumed and acked',
      async () => {
        const counts = await queue.counts();
        return counts.every((c) => c.delayed + c.ready + c.active === 0) ? true : undefined;
      },
      20_000,
      50,
    );
    return await launcher.stats();
  } finally {
    await launcher.stop();
    await queue.close();
  }
}

describe('lateness', () => {
  it('1,000 messages due over 1 s: all consumed, median lateness below 200 ms', async () => {
    // Up to 3 runs: a neighbour's burst on two shared cores can delay every timer of one whole
    // run; a defect (a sleep loop, a lost wake-up token) misses the median on every run. Each
    // extra run is logged (test/helpers/retry-log.ts) with the median that missed.
    const medians: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) {
        noteRetry('runtime-timing: median lateness', attempt, `median ${medians.at(-1)} ms`);
      }
      const stats = await run(`late${attempt}`);
      expect(stats.totals).toMatchObject({ claimed: TOTAL, done: TOTAL, failed: 0, inFlight: 0 });
      expect(stats.totals.summary.lateness.count).toBe(TOTAL);
      expect(stats.actors.map((a) => [a.status, a.stat?.claimed])).toEqual(
        Array(GROUPS).fill(['ok', TOTAL / GROUPS]),
      );
      medians.push(stats.totals.summary.lateness.p50);
      if (stats.totals.summary.lateness.p50 < 200) break;
    }
    expect(
      Math.min(...medians),
      `median lateness of each try: ${medians.join(', ')} ms`,
    ).toBeLessThan(200);
  });
});
