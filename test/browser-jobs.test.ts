/// <reference lib="dom" />
// The dashboard's job browser in a real browser (Debian's chromium driven by playwright-core)
// against a running launcher: a tab per state with its count, pages by cursor, an id-prefix
// search, hostile bodies (markup, a huge one, bytes, a raw member another program ZADDed)
// shown as text, a row's whole record in the job view, and run now, cancel and retry clicked
// for real.
import { existsSync, rmSync } from 'node:fs';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKeys, Queue } from '../src/index.js';
import { httpLauncher } from './helpers/http.js';
import { tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const CHROMIUM = '/usr/bin/chromium';
const IMG = '<img src=x onerror="window.__pwned=1">';
const SCRIPT = '<script>window.__pwned=2</script>';
const HOUR = 3_600_000;
const redis = useRuntimeRedis();

describe('the job browser in a browser', () => {
  let context: BrowserContext;
  let page: Page;
  let queue: Queue;
  let stop: () => Promise<void>;
  let profile: string;
  let base: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's browser (apt-get install -y chromium)`,
      );
    }
    const { launcher, url, prefix } = await httpLauncher(redis.server.url, { prefix: 'jobs' });
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    stop = () => launcher.stop(0);
    base = url;
    profile = tempDir('skyq-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
      viewport: { width: 1280, height: 900 },
    });
    context.setDefaultTimeout(20_000);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('response', (response) => {
      if (response.status() >= 400) pageErrors.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(url);
  });

  afterAll(async () => {
    await context?.close();
    await queue?.close();
    await stop?.();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const row = (id: string) => page.locator(`#jobs tbody tr[data-id=${JSON.stringify(id)}]`);
  /** The job view's timeline, by what each line tells of. */
  const times = () =>
    page
      .locator('#job-view [data-field="timeline"] li')
      .evaluateAll((items) => items.map((li) => (li as HTMLElement).dataset.at));
  const closeView = async () => {
    await page.locator('#job-dialog[open]').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#job-dialog[open]').waitFor({ state: 'detached' });
  };
  const pwned = () => page.evaluate(() => (window as { __pwned?: number }).__pwned);
  const tab = async (state: string) => {
    await page.locator(`#jobs-tab-${state}`).click();
    await page.waitForFunction(
      (s) => document.querySelector(`#jobs-tab-${s}`)?.getAttribute('aria-selected') === 'true',
      state,
    );
  };

  it('shows hostile delayed bodies as text, with the count on the tab', async () => {
    const huge = `${SCRIPT}${'h'.repeat(200_000)}`;
    await queue.add(`${IMG}${SCRIPT}`, { id: 'hostile-markup', group: 0, delay: HOUR });
    await queue.add(huge, { id: 'hostile-huge', group: 1, delay: HOUR + 1 });
    await queue.add(Buffer.from([0x3c, 0x73, 0xff, 0x00, 0x3e]), {
      id: 'hostile-bytes',
      group: 0,
      delay: HOUR + 2,
    });
    // A member another program ZADDs: its name is markup, and it is its own body.
    const [delayedKey] = groupKeys('jobs', 1);
    const [s] = (await redis.client.time()) as [number, number];
    await redis.client.zadd(delayedKey as string, Number(s) * 1000 + HOUR + 3, `hostile-${IMG}`);
    await tab('delayed');
    await page.locator('#jobs-prefix').fill('');
    await page.locator('#jobs-search button[type=submit]').click();
    await row('hostile-markup').waitFor();
    // The tab counts every delayed message, those of the other tests too (in any order).
    const { delayed } = await queue.listCounts();
    expect(delayed).toBeGreaterThanOrEqual(4);
    await page.waitForFunction(
      (n) => document.querySelector('#jobs-tab-delayed .count')?.textContent === n,
      delayed.toLocaleString('en-US'),
    );
    expect(await row('hostile-markup').locator('td.body').textContent()).toBe(`${IMG}${SCRIPT}`);
    expect(await row('hostile-huge').locator('td.body').textContent()).toBe(
      `${huge.slice(0, 300)}…`,
    );
    expect(await row('hostile-bytes').locator('td.body').textContent()).toBe(
      'binary: 3c 73 ff 00 3e',
    );
    expect(await row(`hostile-${IMG}`).locator('td.id').textContent()).toBe(`hostile-${IMG}`);
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await pwned()).toBeUndefined();

    // The whole record in the job view: the full body, escaped, and its timeline.
    await row('hostile-huge').locator('td.id').click();
    await page.locator('#job-view [data-field="body"]').waitFor();
    const body = await page.locator('#job-view [data-field="body"]').textContent();
    expect(body?.startsWith(SCRIPT)).toBe(true);
    expect(body?.length).toBeGreaterThan(60_000);
    expect(await page.locator('#job-view [data-field="state"]').textContent()).toBe('delayed');
    expect(await times()).toEqual(['added', 'due', 'now']);
    expect(await page.locator('body img, body script').count()).toBe(0);
    expect(await pwned()).toBeUndefined();
    await closeView();
  });

  it('pages by cursor and searches by id prefix', async () => {
    await queue.addBulk(
      Array.from({ length: 60 }, (_, i) => ({
        body: { i },
        options: { id: `page-${String(i).padStart(2, '0')}`, group: i % 2, delay: 2 * HOUR + i },
      })),
    );
    await tab('delayed');
    await page.locator('#jobs-prefix').fill('page-');
    await page.locator('#jobs-search button[type=submit]').click();
    await row('page-00').waitFor();
    const seen: string[] = [];
    for (let p = 0; p < 3; p++) {
      await page.waitForFunction(
        (n) => document.querySelector('#jobs-range')?.textContent?.startsWith(`page ${n}`),
        p + 1,
      );
      seen.push(
        ...(await page
          .locator('#jobs tbody tr')
          .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id as string))),
      );
      if (p < 2) await page.locator('#jobs-next').click();
    }
    expect(seen).toEqual(
      Array.from({ length: 60 }, (_, i) => `page-${String(i).padStart(2, '0')}`),
    );
    expect(await page.locator('#jobs-next').isDisabled()).toBe(true);
    await page.locator('#jobs-prefix').fill('');
  });

  it('shows the tab clicked while the page before was still loading, not that page', async () => {
    await tab('done');
    // Hold the next delayed page until the dead tab was clicked; then the dead page must follow
    // at once (the app's own refresh of the browser comes only every 5 s).
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/list?*state=delayed*', async (route) => {
      await held;
      await route.continue();
    });
    const asked: { state: string | null; at: number }[] = [];
    const onRequest = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/list')
        asked.push({ state: url.searchParams.get('state'), at: Date.now() });
    };
    page.on('request', onRequest);
    try {
      await page.locator('#jobs-tab-delayed').click();
      await waitFor('the delayed page asked for', async () =>
        asked.some((a) => a.state === 'delayed') ? true : undefined,
      );
      await page.locator('#jobs-tab-dead').click();
      const releasedAt = Date.now();
      release();
      const dead = await waitFor(
        'the dead page asked for',
        async () => asked.find((a) => a.state === 'dead' && a.at >= releasedAt),
        4_000,
      );
      // Before, the click joined the held load and the dead page came with the next refresh.
      expect(dead.at - releasedAt).toBeLessThan(800);
      await page.waitForFunction(
        () => document.querySelector('#jobs-tab-dead')?.getAttribute('aria-selected') === 'true',
      );
    } finally {
      page.off('request', onRequest);
      await page.unroute('**/api/list?*state=delayed*');
      await tab('delayed');
    }
  });

  it('answers bad list queries with a 400 naming what is wrong', async () => {
    for (const [query, message] of [
      ['state=sleeping', 'state: must be one of delayed, ready, active, done, dead, waiting'],
      ['state=ready&limit=9999', 'limit: must be between 1 and 500'],
      ['state=dead&cursor=nonsense', 'cursor: is not a cursor from a dead page'],
      ['state=done&group=x', 'group: must be a whole number'],
    ]) {
      const response = await fetch(new URL(`/api/list?${query}`, base));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(message);
    }
  });

  it('runs a delayed job now and cancels another, through the buttons', async () => {
    const ran = await queue.add({ list: 'jobs:ran' }, { id: 'run-me', group: 1, delay: HOUR });
    await queue.add({ never: true }, { id: 'cancel-me', group: 0, delay: HOUR });
    await tab('delayed');
    await page.locator('#jobs-prefix').fill('');
    await page.locator('#jobs-search button[type=submit]').click();
    await row('run-me').locator('button[data-action="run-now"]').click();
    await waitFor('the job run now to run', async () =>
      (await redis.client.lrange('jobs:ran', 0, -1)).includes(ran) ? true : undefined,
    );
    await row('cancel-me').locator('button[data-action="cancel"]').click();
    await page.locator('#confirm-ok').click();
    await row('cancel-me').waitFor({ state: 'detached' });
    expect(await queue.get('cancel-me')).toBeNull();

    // The one that ran is in the done tab, with its record.
    await tab('done');
    await row('run-me').waitFor();
    await row('run-me').locator('td.id').click();
    await page.waitForFunction(
      () => document.querySelector('#job-view [data-field="state"]')?.textContent === 'done',
    );
    expect(await times()).toContain('finished');
    await closeView();
  });

  it("says a done job's big body was not kept, not what stayed of its record", async () => {
    const id = await queue.add('b'.repeat(70 * 1024), { id: 'big-done', group: 1 });
    await waitFor('the big job to finish', async () =>
      (await queue.get(id))?.state === 'done' ? true : undefined,
    );
    await tab('done');
    await row(id).waitFor();
    expect(await row(id).locator('td.body').textContent()).toBe('not kept (over 64 KiB)');
  });

  it('retries a dead job through its button, its error shown as text', async () => {
    await redis.client.set('jobs:failing', '1');
    const id = await queue.add(
      { failWhile: 'jobs:failing', error: `${IMG}${SCRIPT}`, list: 'jobs:retried' },
      { id: 'retry-me', group: 0, attempts: 1 },
    );
    await waitFor('the job to die', async () =>
      (await queue.get(id))?.state === 'dead' ? true : undefined,
    );
    await tab('dead');
    await row(id).waitFor();
    await row(id).locator('td.id').click();
    await page.waitForFunction(
      (e) => document.querySelector('#job-view [data-field="last error"]')?.textContent === e,
      `${IMG}${SCRIPT}`,
    );
    expect(await page.locator('body img, body script').count()).toBe(0);
    await closeView();
    await redis.client.del('jobs:failing');
    await row(id).locator('button[data-action="retry"]').click();
    await waitFor('the retried job to run', async () =>
      (await redis.client.lrange('jobs:retried', 0, -1)).includes(id) ? true : undefined,
    );
    await row(id).waitFor({ state: 'detached' });
    expect(await pwned()).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });
});
