/// <reference lib="dom" />
// The stand-alone dashboard (`skyq dashboard`, figures a launcher publishes to Redis) in a real
// browser (Debian's chromium driven by playwright-core): the lateness chart draws p50 and p99,
// the dead-letter pager goes the way its labels say (newest first), and at 420 px the page fits
// the screen (rows are cards; nothing scrolls sideways). The 420 px screenshot is saved under
// .test-tmp/.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { type Launcher, Queue, startActors } from '../src/index.js';
import { placedBoxes } from './helpers/browser.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, ROOT, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, '.test-tmp', 'screenshots');
const redis = useRuntimeRedis();

describe('stand-alone dashboard in a browser', () => {
  const prefix = freshPrefix('layout');
  let context: BrowserContext;
  let page: Page;
  let queue: Queue;
  let launcher: Launcher;
  let dashboard: HttpHandle;
  let profile: string;
  const pageErrors: string[] = [];

  /** `count` dead letters in group 1, all dead before this returns; bodies name the batch. */
  const deadBatch = async (batch: string, count: number) => {
    const before = (await queue.counts())[1]?.dead ?? 0;
    await queue.addBulk(
      Array.from({ length: count }, (_, i) => ({
        body: { failWhile: `${prefix}:failing`, error: 'refused', batch, i },
        options: { group: 1, attempts: 1 },
      })),
    );
    await waitFor(`${count} dead letters of batch ${batch}`, async () =>
      ((await queue.counts())[1]?.dead ?? 0) === before + count ? true : undefined,
    );
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's browser (apt-get install -y chromium)`,
      );
    }
    launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      logDir: tempDir(),
      handler: fixture('http-handler.mjs'),
      lookaheadMs: 5,
    });
    dashboard = await serveDashboard(
      { redis: redis.server.url, prefix, groups: 2 },
      { listen: '127.0.0.1:0' },
    );
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    // 45 dead letters in three batches, each dead before the next is added: oldest is A.
    await redis.client.set(`${prefix}:failing`, '1');
    await deadBatch('A', 20);
    await deadBatch('B', 20);
    await deadBatch('C', 5);
    profile = tempDir('skyq-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1280, height: 900 },
    });
    context.setDefaultTimeout(20_000);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        pageErrors.push(message.text());
      }
    });
    await page.goto(dashboard.url);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await dashboard?.close();
    await queue?.close();
    await launcher?.stop(0);
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** The batch each shown dead letter was added in, top to bottom. */
  const shownBatches = async () =>
    (await page.locator('#dead tbody td.body').allTextContents()).map(
      (text) => (JSON.parse(text) as { batch: string }).batch,
    );

  it('pages dead letters newest first, "older ›" going to older ones', async () => {
    await page.locator('#dead tbody td.body').first().waitFor();
    expect(await page.locator('#dead-range').textContent()).toBe('1–20 of 45');
    expect(await shownBatches()).toEqual([...Array(5).fill('C'), ...Array(15).fill('B')]);
    const newer = page.getByRole('button', { name: /newer/ });
    const older = page.getByRole('button', { name: /older/ });
    // On the first page (the newest letters) there is nothing newer.
    expect(await newer.isDisabled()).toBe(true);
    expect(await older.isEnabled()).toBe(true);
    await older.click();
    await page.waitForFunction(
      () => document.getElementById('dead-range')?.textContent === '21–40 of 45',
    );
    expect(await shownBatches()).toEqual([...Array(5).fill('B'), ...Array(15).fill('A')]);
    await older.click();
    await page.waitForFunction(
      () => document.getElementById('dead-range')?.textContent === '41–45 of 45',
    );
    expect(await shownBatches()).toEqual(Array(5).fill('A'));
    expect(await older.isDisabled()).toBe(true);
    await newer.click();
    await page.waitForFunction(
      () => document.getElementById('dead-range')?.textContent === '21–40 of 45',
    );
    expect(await shownBatches()).toEqual([...Array(5).fill('B'), ...Array(15).fill('A')]);
  });

  it('draws lateness p50 and p99, not the mean alone', async () => {
    const stop = Date.now() + 6000;
    while (Date.now() < stop) {
      await queue.addBulk(
        Array.from({ length: 20 }, (_, i) => ({ body: {}, options: { group: i % 2 } })),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const line of ['p50', 'p99', 'mean']) {
      await page.waitForFunction(
        (name) =>
          (
            document.querySelector(`#lateness-chart path.line.${name}`)?.getAttribute('d') ?? ''
          ).includes('L'),
        line,
      );
    }
  }, 30_000);

  it('fits a 420 px screen: nothing wider than the page, rows as cards', async () => {
    await page.setViewportSize({ width: 420, height: 900 });
    // The charts are drawn to their container's width on the next poll.
    await page.waitForTimeout(1500);
    const widths = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(widths.scroll, JSON.stringify(widths)).toBeLessThanOrEqual(widths.client);
    expect(widths.body, JSON.stringify(widths)).toBeLessThanOrEqual(widths.client);
    // Every key part shows, and lies within the screen's width (measured in one step: CI once
    // saw the chart's svg replaced by a poll between locating and measuring it).
    const selectors = [
      'header h1',
      '#status',
      '#total-dead',
      '#groups table',
      '#throughput-chart svg',
      '#lateness-chart svg',
      '#actors table',
      '#dead-retry-all',
      '#dead-next',
      '#dead tbody .id-link',
      '#job-id',
    ];
    const boxes = await placedBoxes(page, selectors);
    for (const box of boxes) {
      expect(box.found, box.selector).toBe(true);
      expect(box.x, box.selector).toBeGreaterThanOrEqual(0);
      expect(box.right, box.selector).toBeLessThanOrEqual(420);
      expect(box.visible, box.selector).toBe(true);
    }
    // No section scrolls sideways: the tables are cards within the screen's width.
    const scrolling = await page.evaluate(() =>
      Array.from(document.querySelectorAll('main section'))
        .filter((s) => (s as HTMLElement).scrollWidth > (s as HTMLElement).clientWidth)
        .map((s) => s.id),
    );
    expect(scrolling).toEqual([]);
    // Readable, not squeezed: a card's values are not wrapped word by word: a dead letter's
    // card holds its nine values in a dozen lines or so.
    const heights = await page.evaluate(() => ({
      rows: Array.from(document.querySelectorAll('#dead tbody tr')).map(
        (tr) => (tr as HTMLElement).getBoundingClientRect().height,
      ),
      lineHeight: Number.parseFloat(getComputedStyle(document.body).lineHeight) || 20,
    }));
    const line = Math.max(heights.lineHeight, 18);
    expect(Math.max(...heights.rows), 'dead-letter card height').toBeLessThan(line * 16);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'dashboard-420.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
