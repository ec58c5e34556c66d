/// <reference lib="dom" />
/**
 * Rate limits where a user sees them: `skyq start --rate-limit` (and its one-line refusal),
 * `skyq stats`, /metrics, /api/rate-limits and the dashboard in a real browser (Debian's
 * chromium driven by playwright-core), while a per-name limit holds work back.
 */
import { rmSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { metricSamples, sampleValue } from './helpers/http.js';
import {
  type CliChild,
  fixture,
  runCli,
  spawnCli,
  tempDir,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();
const CHROMIUM = '/usr/bin/chromium';

describe('rate limits in the CLI, stats, /metrics and the dashboard', () => {
  it('a bad --rate-limit is one line naming it, before anything starts', async () => {
    const result = await runCli(['start', '--redis', redis.server.url, '--rate-limit', 'fast']);
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe(
      'skyq: rate-limit: must be like 100/s, 50/100ms, 6000/min or NAME=10/s (got "fast")',
    );
    expect(lines.length).toBeLessThanOrEqual(2); // the line, then where the help is
  });

  it('start --rate-limit 10/s --rate-limit email.send=2/s: seen in stats, /metrics, the API and the page', async () => {
    const prefix = 'rviews';
    const where = ['--redis', redis.server.url, '--prefix', prefix, '--groups', '2'];
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await queue.ready();
    await queue.addBulk(
      Array.from({ length: 40 }, (_, i) => ({ body: { i }, options: { name: 'email.send' } })),
    );
    let launcher: CliChild | undefined;
    try {
      launcher = spawnCli(
        [
          'start',
          ...where,
          '--rate-limit',
          '10/s',
          '--rate-limit',
          'email.send=2/s',
          '--handler',
          fixture('rate-record.mjs'),
          '--log-dir',
          tempDir(),
          '--http',
          '127.0.0.1:0',
        ],
        { SKYQ_FIXTURE_REDIS: redis.server.url },
      );
      const child = launcher;
      const url = await waitFor(
        'the HTTP server',
        () => /on (http:\/\/\S+)/.exec(child.stdout())?.[1],
      );
      expect(child.stdout()).toContain(
        'skyq: rate limit 10/s for the whole queue, 2/s for email.send, shared by every launcher of rviews',
      );
      // email.send is held back: at 2/s, 40 take 20 s.
      await waitFor('some held back', async () => {
        const limits = (await queue.rateLimits.list()).find((b) => b.name === 'email.send');
        return limits?.limited ? true : undefined;
      });

      const stats = await runCli(['stats', ...where]);
      expect(stats.code).toBe(0);
      expect(stats.stdout).toMatch(/rate limit\s+limit\s+tokens\s+limited/);
      expect(stats.stdout).toMatch(/whole queue\s+10\/s\s+\d+ of 1\s+(yes|no)/);
      expect(stats.stdout).toMatch(/email\.send\s+2\/s\s+[01] of 1\s+yes/);

      const api = (await (await fetch(new URL('/api/rate-limits', url))).json()) as {
        limits: { name: string; max: number; perMs: number; limited: boolean }[];
      };
      expect(api.limits.map((b) => [b.name, b.max, b.perMs])).toEqual([
        ['*', 10, 1000],
        ['email.send', 2, 1000],
      ]);

      const metrics = metricSamples(await (await fetch(new URL('/metrics', url))).text());
      expect(sampleValue(metrics, 'skyq_rate_limit_per_second', { name: '*' })).toBe(10);
      expect(sampleValue(metrics, 'skyq_rate_limit_per_second', { name: 'email.send' })).toBe(2);
      expect(sampleValue(metrics, 'skyq_rate_limited', { name: 'email.send' })).toBe(1);
      // At most its cap (1): a token may come back between two reads.
      expect(
        sampleValue(metrics, 'skyq_rate_limit_tokens', { name: 'email.send' }),
      ).toBeLessThanOrEqual(1);
      const held = metrics
        .filter((s) => s.name === 'skyq_messages_held_back_total')
        .reduce((sum, s) => sum + s.value, 0);
      expect(held).toBeGreaterThan(0);

      const profile = tempDir('skyq-chromium-');
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      try {
        const page = browser.pages()[0] ?? (await browser.newPage());
        await page.goto(url);
        await page.waitForSelector('#rate-limits tr[data-limit="email.send"]', { timeout: 20_000 });
        expect(await page.locator('#rate-limits').isVisible()).toBe(true);
        const row = await page
          .locator('#rate-limits tr[data-limit="email.send"] td')
          .allTextContents();
        expect(row.slice(0, 2)).toEqual(['email.send', '2/s']);
        expect(row[3]).toBe('yes');
        const all = await page.locator('#rate-limits tr[data-limit="*"] td').allTextContents();
        expect(all.slice(0, 2)).toEqual(['whole queue', '10/s']);
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
    } finally {
      launcher?.child.kill('SIGTERM');
      await launcher?.done;
      await queue.close();
    }
  }, 90_000);
});
