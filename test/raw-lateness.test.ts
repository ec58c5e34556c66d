/**
 * A raw member with a score of 0 or below (`ZADD task_group:8 -5 x`) is due at once: its lateness
 * counts from the claim that first sees it, not from 1970 (today: 1.8e12 ms in the log, `stats`,
 * the dashboard and the histogram). Checked where a user reads it: the job's debug start line,
 * `skyq stats --json` and the /metrics histogram.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { httpLauncher, sampleValue, scrape } from './helpers/http.js';
import { runCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** Far above any real lateness on a loaded 2-core machine, far below 1970's 1.8e12 ms. */
const GENEROUS_MS = 60_000;

it('negative and zero scores are late from when they are first seen, in logs, stats and /metrics', async () => {
  const logDir = tempDir('skyq-raw-late-');
  const { launcher, url, prefix } = await httpLauncher(redis.server.url, {
    groups: 1,
    logDir,
    logLevel: 'debug',
  });
  try {
    await redis.client.zadd(`${prefix}:0`, -5, 'negative', 0, 'zero', '-inf', 'minus-infinity');
    await waitFor('the raw members to be handled', async () =>
      (await launcher.stats()).totals.done >= 3 ? true : undefined,
    );

    // The log: each job's start line at debug says how late it started (written as it flushes).
    const starts = await waitFor('the three start lines', () => {
      let text = '';
      try {
        text = readFileSync(join(logDir, 'actor-0.log'), 'utf8');
      } catch {
        return undefined;
      }
      const found = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { event?: string; job?: string; lateMs?: number })
        .filter((line) => line.event === 'start');
      return found.length >= 3 ? found : undefined;
    });
    expect(starts.map((s) => s.job).sort()).toEqual(['minus-infinity', 'negative', 'zero']);
    for (const start of starts) {
      expect(start.lateMs, start.job).toBeGreaterThanOrEqual(0);
      expect(start.lateMs, start.job).toBeLessThan(GENEROUS_MS);
    }

    // skyq stats --json: the launcher's lateness figures.
    const stats = await waitFor('stats to carry the three starts', async () => {
      const run = await runCli([
        'stats',
        '--redis',
        redis.server.url,
        '--prefix',
        prefix,
        '--groups',
        '1',
        '--json',
      ]);
      expect(run.stderr).toBe('');
      const parsed = JSON.parse(run.stdout) as {
        launchers: {
          totals: { done: number; summary: { lateness: { max: number; p99: number } } };
        }[];
      };
      const totals = parsed.launchers[0]?.totals;
      return totals && totals.done >= 3 ? totals : undefined;
    });
    expect(stats.summary.lateness.max).toBeLessThan(GENEROUS_MS);
    expect(stats.summary.lateness.p99).toBeLessThan(GENEROUS_MS);

    // /metrics: every start in the histogram's buckets at or below 60 s.
    const { samples } = await scrape(url);
    const count = sampleValue(samples, 'skyq_lateness_seconds_count', { group: '0' });
    expect(count).toBe(3);
    const within = sampleValue(samples, 'skyq_lateness_seconds_bucket', { group: '0', le: '60' });
    expect(within).toBe(3);
    expect(sampleValue(samples, 'skyq_lateness_seconds_sum', { group: '0' })).toBeLessThan(60);
  } finally {
    await launcher.stop(0);
  }
});
