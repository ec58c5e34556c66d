/// <reference lib="dom" />
// The job view's progress and log lines (issue 28, 2) in a real browser: a running job's bar and
// lines, read again while it runs (new progress and lines show without reopening), a JSON
// progress shown as JSON, a hostile line shown as text, the section kept once the job is done,
// and no axe violation. The stand-alone dashboard on a real redis-server; the job is leased and
// reported by hand (queue.progress, queue.log), so nothing races the page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { type Message, Queue } from '../src/index.js';
import { axeViolations, type OpenBrowser, openBrowser } from './helpers/browser.js';
import { freshPrefix } from './helpers/queue.js';
import { useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const IMG = '<img src=x onerror="window.__pwned=1">';

describe('the job view’s progress and log lines', () => {
  let browser: OpenBrowser;
  let page: Page;
  let queue: Queue;
  let dashboard: HttpHandle;
  let job: Message;

  beforeAll(async () => {
    const options = { redis: redis.server.url, prefix: freshPrefix('jr'), groups: 1 };
    queue = new Queue(options);
    await queue.add({ report: 'sales' }, { id: 'r-running' });
    job = await waitFor('a lease', async () => (await queue.claim(0, 1, 10 * 60_000))[0]);
    await queue.progress(job, 20);
    await queue.log(job, 'reading orders');
    await queue.log(job, IMG);
    dashboard = await serveDashboard(options, { listen: '127.0.0.1:0' });
    browser = await openBrowser();
    page = browser.page;
    await page.goto(dashboard.url);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await queue?.close();
  });

  const field = (name: string) => page.locator(`#job-view [data-field="${name}"]`);
  const until = (name: string, text: string) =>
    page.waitForFunction(
      ([n, t]) => document.querySelector(`#job-view [data-field="${n}"]`)?.textContent === t,
      [name, text] as const,
    );

  it('shows a running job’s bar and lines, and follows them while it runs', async () => {
    await page.locator('#job-id').fill('r-running');
    await page.locator('#job-form button[type=submit]').click();
    await until('progress', '20 %');
    expect(await page.locator('#job-view progress').getAttribute('value')).toBe('20');
    expect(await field('logs').textContent()).toBe(`reading orders\n${IMG}`);
    expect(await field('log count').textContent()).toBe('2 lines');
    expect(await page.locator('#job-dialog img').count()).toBe(0);

    // Reported after the view opened: it shows them by itself.
    await queue.progress(job, 65);
    for (let i = 1; i <= 120; i++) await queue.log(job, `order ${i}`);
    await until('progress', '65 %');
    await until('log count', 'the last 100 of 122 lines');
    const lines = (await field('logs').textContent())?.split('\n') ?? [];
    expect(lines[0]).toBe('order 21');
    expect(lines.at(-1)).toBe('order 120');
    // It follows the end of the log: the latest line is in view.
    expect(
      await field('logs').evaluate(
        (log) => log.scrollTop + log.clientHeight >= log.scrollHeight - 2,
      ),
    ).toBe(true);

    await queue.progress(job, { stage: 'upload', files: 3 });
    await until('progress', JSON.stringify({ stage: 'upload', files: 3 }, null, 2));
    expect(await axeViolations(page)).toEqual([]);

    // Done: the view draws it again as done, and the reports stay with the kept job.
    job.result = 'sent';
    await queue.ack([job]);
    await until('state', 'done');
    expect(await field('progress').textContent()).toBe(
      JSON.stringify({ stage: 'upload', files: 3 }, null, 2),
    );
    expect(await field('log count').textContent()).toBe('the last 100 of 122 lines');
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(browser.errors).toEqual([]);
  });
});
