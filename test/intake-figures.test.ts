/**
 * Issue 17: where an intake shows. `/metrics` has skyq_intake_items_total{list} and
 * skyq_intake_list_length{list}; the dashboard's overview and `skyq stats` show each intake
 * list's length, items moved and rate.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { httpLauncher, sampleValue, scrape } from './helpers/http.js';
import { itemsOf } from './helpers/intake.js';
import { freshPrefix } from './helpers/queue.js';
import { runCli, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('intake figures', () => {
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('shows in /metrics, the dashboard overview and skyq stats', async () => {
    const prefix = freshPrefix('if');
    const busy = `${prefix}:busy`;
    const wrong = `${prefix}:wrong`;
    await redis.client.set(wrong, 'a string, not a list');
    const { launcher, url } = await httpLauncher(redis.server.url, {
      prefix,
      intake: [busy, { list: wrong, group: 1 }],
      handler: undefined,
    });
    stops.push(() => launcher.stop(1000));
    await redis.client.lpush(busy, ...itemsOf('busy', 50));
    await waitFor('50 items moved', async () => {
      const figures = (await launcher.stats()).intake ?? [];
      return figures[0]?.items === 50 ? true : undefined;
    });

    const { samples } = await scrape(url);
    expect(sampleValue(samples, 'skyq_intake_items_total', { list: busy })).toBe(50);
    expect(sampleValue(samples, 'skyq_intake_items_total', { list: wrong })).toBe(0);
    expect(sampleValue(samples, 'skyq_intake_list_length', { list: busy })).toBe(0);
    // A list that cannot be read has no length sample rather than a made-up 0.
    await waitFor('the wrong type seen', async () =>
      (await launcher.stats()).intake?.[1]?.error ? true : undefined,
    );
    const again = await scrape(url);
    expect(sampleValue(again.samples, 'skyq_intake_list_length', { list: wrong })).toBeUndefined();

    type Overview = {
      intake: { list: string; launcher: string; items: number; error: string | null }[];
    };
    // The dashboard reads what launchers publish (about once a second).
    const overview = await waitFor('the overview to show the 50', async () => {
      const body = (await (await fetch(new URL('/api/overview', url))).json()) as Overview;
      return body.intake[0]?.items === 50 && body.intake[1]?.error ? body : undefined;
    });
    expect(overview.intake.map((l) => [l.list, l.launcher, l.items])).toEqual([
      [busy, launcher.id, 50],
      [wrong, launcher.id, 0],
    ]);
    expect(overview.intake[1]?.error).toMatch(/WRONGTYPE/);

    const stats = await runCli(['stats', '--redis', redis.server.url, '--prefix', prefix]);
    expect(stats.code).toBe(0);
    const row = stats.stdout.split('\n').find((line) => line.startsWith(busy));
    expect(stats.stdout).toContain('intake list');
    expect(row?.split(/\s+/).slice(0, 5)).toEqual([
      busy,
      String(launcher.intake[0]?.group),
      '0',
      '0',
      '50',
    ]);
    expect(stats.stdout).toMatch(/WRONGTYPE/);
  });

  it('bad --intake input is one clear line, and nothing starts', async () => {
    const where = ['--redis', redis.server.url, '--prefix', freshPrefix('if')];
    const empty = await runCli(['start', ...where, '--intake', 'a,,b']);
    expect(empty.code).toBe(1);
    expect(empty.stderr.split('\n')[0]).toBe(
      'skyq: intake: expected list names separated by commas (got "a,,b")',
    );
    const noSlot = await runCli(['start', ...where, '--intake', 'ok,a}b']);
    expect(noSlot.code).toBe(1);
    expect(noSlot.stderr).toMatch(/intake\[1\]\.list.*no hash tag/);
  });
});
