/// <reference lib="dom" />
// The dashboard's schedules table in a real browser (Debian's chromium driven by
// playwright-core; issue 24, items 1.4 and 1.5): each schedule's next three runs on the wall
// clock of a named zone (a cron's own, the browser's for `every`) with "in 1 h 12 min", its
// interval as a duration, and its body as text. Before it showed one UTC-less local time,
// `every 300000 ms`, and no body.
import { existsSync, rmSync } from 'node:fs';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { tempDir, useRuntimeRedis } from './helpers/runtime.js';

const CHROMIUM = '/usr/bin/chromium';
const redis = useRuntimeRedis();

describe('schedules on the dashboard', () => {
  const prefix = freshPrefix('bsched');
  let context: BrowserContext;
  let queue: Queue;
  let dashboard: HttpHandle;
  let profile: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await queue.schedules.upsert('nightly', {
      cron: '0 3 * * *',
      tz: 'Europe/Berlin',
      body: '<b>monthly</b> figures',
    });
    await queue.schedules.upsert('tick', { every: '5m', body: { kind: 'tick' } });
    dashboard = await serveDashboard(
      { redis: redis.server.url, prefix, groups: 2 },
      { listen: '127.0.0.1:0' },
    );
    profile = tempDir('skyq-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
      timezoneId: 'Asia/Tokyo',
    });
    context.setDefaultTimeout(20_000);
  });

  afterAll(async () => {
    await context?.close();
    await dashboard?.close();
    await queue?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('shows the next runs in a named zone, how far off, the interval and the body', async () => {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(dashboard.url);
    const row = (id: string, cell: string) =>
      `#schedules tr[data-schedule="${id}"] [data-cell="${cell}"]`;
    await page.waitForSelector(row('nightly', 'next'));
    const nightly = await page.locator(`${row('nightly', 'next')} div`).allTextContents();
    expect(nightly).toHaveLength(3);
    for (const run of nightly) {
      expect(run).toMatch(
        /^20\d\d-\d\d-\d\d 03:00 Europe\/Berlin \(in (\d+ (d|h|min|s) ?){1,2}\)$/,
      );
    }
    expect(await page.locator(row('nightly', 'when')).textContent()).toBe(
      '0 3 * * * (Europe/Berlin)',
    );
    expect(await page.locator(row('nightly', 'body')).textContent()).toBe('<b>monthly</b> figures');
    expect(await page.locator(row('tick', 'when')).textContent()).toBe('every 5 min');
    const tick = await page.locator(`${row('tick', 'next')} div`).allTextContents();
    expect(tick[0]).toMatch(/ Asia\/Tokyo \((now|in \d|\d.* ago)/); // the browser's zone
    expect(await page.locator(row('tick', 'body')).textContent()).toBe('{"kind":"tick"}');
    expect(errors).toEqual([]);
  });
});
