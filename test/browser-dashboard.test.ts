/// <reference lib="dom" />
// The dashboard in a real browser (Debian's chromium driven by playwright-core) against a
// running launcher: figures move as messages flow, a dead letter is retried through the
// button, a hostile body shows as text, a job is looked up, rescheduled and cancelled, and a
// group is paused and resumed. docs/dashboard.png comes from `npm run docs:screenshot`.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Launcher, Queue } from '../src/index.js';
import { httpLauncher } from './helpers/http.js';
import { tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
const redis = useRuntimeRedis();

describe('dashboard in a browser', () => {
  let context: BrowserContext;
  let page: Page;
  let queue: Queue;
  let launcher: Launcher;
  let profile: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's browser (apt-get install -y chromium)`,
      );
    }
    const started = await httpLauncher(redis.server.url, { prefix: 'orders' });
    launcher = started.launcher;
    const { url, prefix } = started;
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
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
      // Failed requests are judged by their responses below.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        pageErrors.push(message.text());
      }
    });
    page.on('response', (response) => {
      const lookupMiss = response.status() === 404 && response.url().includes('/api/jobs/');
      if (response.status() >= 400 && !lookupMiss) {
        pageErrors.push(`${response.status()} ${response.url()}`);
      }
    });
    await page.goto(url);
    // Every test starts from a page that shows both actors.
    await waitForText('#actors tr[data-group="0"] [data-cell="state"]', 'running');
    await waitForText('#actors tr[data-group="1"] [data-cell="state"]', 'running');
  });

  afterAll(async () => {
    await context?.close();
    await queue?.close();
    await launcher?.stop(0);
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const text = (selector: string) => page.locator(selector).first().textContent();
  const waitForText = (selector: string, expected: string) =>
    page.waitForFunction(([s, e]) => document.querySelector(s as string)?.textContent === e, [
      selector,
      expected,
    ] as const);

  it('shows the actors and sees the figures change as messages flow', async () => {
    // The figures so far (other tests may have run first), once the page shows them too.
    const before = (await launcher.stats()).actors.map((a) => a.stat?.done ?? 0);
    const doneBefore = before.reduce((sum, n) => sum + n, 0);
    await waitForText('#total-done', String(doneBefore));
    const delayedBefore = (await queue.counts())[1]?.delayed ?? 0;
    await queue.addBulk(
      Array.from({ length: 300 }, (_, i) => ({
        body: { list: 'browser:done' },
        options: { group: i % 2, delay: (i * 7) % 1500 },
      })),
    );
    await queue.addBulk(
      Array.from({ length: 5 }, () => ({ body: 'later', options: { group: 1, delay: 600_000 } })),
    );
    await waitForText('#groups tr[data-group="1"] [data-cell="delayed"]', `${delayedBefore + 5}`);
    await waitForText('#total-done', `${doneBefore + 300}`);
    expect(await redis.client.llen('browser:done')).toBe(300);
    const perActor = await page.locator('#actors [data-cell="done"]').allTextContents();
    expect(perActor).toEqual(before.map((n) => `${n + 150}`));
    // The charts drew the flow: the throughput line has points, and so does a sparkline.
    await page.waitForFunction(
      () =>
        (document.querySelector('#throughput-chart path.line')?.getAttribute('d') ?? '').length >
        20,
    );
    const spark = await page.locator('#groups tr[data-group="1"] svg.spark path').getAttribute('d');
    expect(spark ?? '').toMatch(/^M/);
  });

  it('shows a hostile dead letter as text and retries it through the button', async () => {
    const deadBefore = (await queue.counts()).reduce((sum, c) => sum + c.dead, 0);
    await redis.client.set('browser:failing', '1');
    const id = await queue.add(
      { failWhile: 'browser:failing', error: HOSTILE, html: HOSTILE, list: 'browser:retried' },
      { group: 0, attempts: 1 },
    );
    const row = page.locator(`#dead tbody tr[data-id="${id}"]`);
    await row.waitFor();
    expect(await row.locator('td.body').textContent()).toBe(
      JSON.stringify({
        failWhile: 'browser:failing',
        error: HOSTILE,
        html: HOSTILE,
        list: 'browser:retried',
      }),
    );
    expect(await row.locator('td.error').textContent()).toBe(HOSTILE);
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();

    await redis.client.del('browser:failing');
    expect(await page.locator('#dead-retry-selected').isDisabled()).toBe(true);
    await row.locator('input[type=checkbox]').check();
    await page.locator('#dead-retry-selected').click();
    await page.locator('#confirm-ok').click();
    await row.waitFor({ state: 'detached' });
    await waitFor('the retried message to run', async () =>
      (await redis.client.lrange('browser:retried', 0, -1)).includes(id) ? true : undefined,
    );
    expect(await text('#toast')).toBe('retried 1 dead letter(s)');
    await waitForText('#total-dead', `${deadBefore}`);
  });

  it('looks a job up, reschedules it and cancels it', async () => {
    const id = await queue.add({ note: HOSTILE }, { group: 1, delay: 3_600_000 });
    await page.locator('#job-id').fill(id);
    await page.locator('#job-form button[type=submit]').click();
    await waitForText('#job-view [data-field="state"]', 'delayed');
    expect(await text('#job-view [data-field="body"]')).toBe(
      JSON.stringify({ note: HOSTILE }, null, 2),
    );
    expect(await page.locator('#job-view img').count()).toBe(0);
    const dueBefore = (await queue.get(id))?.dueAt ?? 0;
    await page.locator('#job-delay').fill('2h');
    await page.locator('#job-run-in').click();
    await waitFor('the new due time', async () => {
      const due = (await queue.get(id))?.dueAt ?? 0;
      return due > dueBefore + 3_000_000 ? true : undefined;
    });
    await page.locator('#job-cancel').click();
    await page.locator('#confirm-ok').click();
    await page.locator('#job-view .missing').waitFor();
    expect(await queue.get(id)).toBeNull();
    await page.keyboard.press('Escape');
    await page.locator('#job-dialog[open]').waitFor({ state: 'detached' });
  });

  it('pauses and resumes a group', async () => {
    const toggle = page.locator('#groups tr[data-group="1"] button.toggle');
    await toggle.click();
    await waitForText('#groups tr[data-group="1"] [data-cell="state"]', 'paused');
    expect((await queue.counts()).map((c) => c.paused)).toEqual([false, true]);
    await toggle.click();
    await waitForText('#groups tr[data-group="1"] [data-cell="state"]', 'running');
    expect((await queue.counts()).map((c) => c.paused)).toEqual([false, false]);
  });

  it('renders without a script error, and a screenshot of it', async () => {
    const file = join(tempDir('skyq-shot-'), 'dashboard.png');
    mkdirSync(join(file, '..'), { recursive: true });
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(10_000);
    expect(pageErrors).toEqual([]);
  });
});
