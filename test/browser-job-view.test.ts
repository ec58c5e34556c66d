/// <reference lib="dom" />
// The job view (issue 27, 2.1 and 2.2) in a real browser: one dialog opened from every Jobs
// tab, the dead letters, a schedule's row and lookup by id; Esc closes it and gives the focus
// back to what opened it. It shows the body (text, JSON pretty-printed, bytes in hex), the
// result, the times with the spans between them, the last error with its stack (a handler in
// test/fixtures/throws.mjs threw it), the schedule an occurrence belongs to, and the actions
// each state allows, each confirmed in the colour of what it does. The stand-alone dashboard
// on a real redis-server; the jobs are put in each state by hand, so nothing races the page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { type Message, Queue } from '../src/index.js';
import handle from './fixtures/throws.mjs';
import { type OpenBrowser, openBrowser } from './helpers/browser.js';
import { freshPrefix } from './helpers/queue.js';
import { useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const IMG = '<img src=x onerror="window.__pwned=1">';
const HOUR = 3_600_000;

describe('the job view', () => {
  let browser: OpenBrowser;
  let page: Page;
  let queue: Queue;
  let dashboard: HttpHandle;

  /** Leases the one message due in group 1 (each is added just before its lease). */
  const lease = async (): Promise<Message> =>
    waitFor('a lease', async () => (await queue.claim(1, 1, 10 * 60_000))[0]);
  /** A dead letter whose last error a handler threw (its stack names throws.mjs). */
  const dead = async (id: string) => {
    await queue.add({ order: 7 }, { id, group: 1, attempts: 1, name: 'invoice.render' });
    const message = await lease();
    try {
      handle(message);
    } catch (error) {
      expect(await queue.fail(message, error)).toBe('dead');
    }
  };

  beforeAll(async () => {
    const prefix = freshPrefix('view');
    const options = { redis: redis.server.url, prefix, groups: 2 };
    queue = new Queue(options);
    await queue.add({ order: 1, note: IMG }, { id: 'v-delayed', group: 0, delay: HOUR, name: IMG });
    await queue.add(Buffer.from([0x3c, 0x73, 0xff, 0x00, 0x3e]), {
      id: 'v-bytes',
      group: 0,
      delay: HOUR,
    });
    await queue.add('x', { id: 'v-active', group: 1 });
    await lease();
    await queue.add('y', { id: 'v-done', group: 1 });
    const done = await lease();
    done.result = { ok: true, pages: 2 };
    done.durationMs = 1234;
    await queue.ack([done]);
    await dead('v-dead');
    await dead('v-dead2');
    await queue.add('plain <b>text</b>', { id: 'v-ready', group: 1 });
    await queue.schedules.upsert('nightly', { every: HOUR, group: 0, body: { report: 'sales' } });
    dashboard = await serveDashboard(options, { listen: '127.0.0.1:0' });
    browser = await openBrowser({
      allow: (url, status) => status === 404 && url.includes('/api/jobs/'),
    });
    page = browser.page;
    await page.goto(dashboard.url);
    await page.locator('#dead tbody .id-link').first().waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await queue?.close();
  });

  const field = (name: string) => page.locator(`#job-view [data-field="${name}"]`);
  const waitForField = (name: string, text: string) =>
    page.waitForFunction(
      ([n, t]) => document.querySelector(`#job-view [data-field="${n}"]`)?.textContent === t,
      [name, text] as const,
    );
  const isOpen = () =>
    page.evaluate(() => (document.getElementById('job-dialog') as HTMLDialogElement).open);
  const focused = () =>
    page.evaluate(() => {
      const at = document.activeElement as HTMLElement | null;
      return { id: at?.id ?? '', text: at?.textContent ?? '', classes: at?.className ?? '' };
    });
  const close = async () => {
    await page.locator('#job-dialog[open]').waitFor();
    await page.keyboard.press('Escape');
    await page.waitForFunction(
      () => !(document.getElementById('job-dialog') as HTMLDialogElement).open,
    );
  };
  const tab = async (state: string) => {
    await page.locator(`#jobs-tab-${state}`).click();
    await page.waitForFunction(
      (s) => document.querySelector(`#jobs-tab-${s}`)?.getAttribute('aria-selected') === 'true',
      state,
    );
  };
  const jobRow = (id: string) => page.locator(`#jobs tbody tr[data-id=${JSON.stringify(id)}]`);

  it('opens from every Jobs tab, dead letters, a schedule and lookup; Esc gives the focus back', async () => {
    for (const [state, id] of [
      ['delayed', 'v-delayed'],
      ['ready', 'v-ready'],
      ['active', 'v-active'],
      ['done', 'v-done'],
      ['dead', 'v-dead'],
    ] as const) {
      await tab(state);
      const link = jobRow(id).locator('.id-link');
      await link.click();
      await waitForField('state', state);
      expect(await isOpen()).toBe(true);
      expect(await page.locator('#job-title').textContent()).toBe(`Job ${id}`);
      expect((await focused()).id).toBe('job-title');
      await close();
      // The dialog's close event (which gives the focus back) follows its closing.
      await expect.poll(focused).toMatchObject({ text: id, classes: 'link id-link' });
    }
    // A dead letter's id, with the keyboard.
    await page.locator('#dead tbody tr[data-id="v-dead"] .id-link').focus();
    await page.keyboard.press('Enter');
    await waitForField('state', 'dead');
    await close();
    // A schedule's row opens its pending occurrence, which links back to the schedule.
    const schedule = page.locator('#schedules tr[data-schedule="nightly"]');
    await schedule.locator('td').first().click();
    await waitForField('state', 'ready');
    expect(await field('schedule').textContent()).toMatch(/^nightly \(its occurrence of /);
    expect(await page.locator('#job-view li[data-at="added"]').textContent()).toBe(
      'added: – (added by schedule nightly)',
    );
    await page.locator('#job-view .schedule-link').click();
    expect(await isOpen()).toBe(false);
    expect(await schedule.getAttribute('class')).toContain('highlight');
    expect(await schedule.evaluate((row) => row === document.activeElement)).toBe(true);
    // Lookup by id.
    await page.locator('#job-id').fill('v-ready');
    await page.locator('#job-form button[type=submit]').click();
    await waitForField('state', 'ready');
    await close();
    await expect.poll(async () => (await focused()).id).toBe('job-id');
    expect(browser.errors).toEqual([]);
  });

  it('shows bodies by kind, the result, the times, and the last error with its stack', async () => {
    await page.locator('#job-id').fill('v-dead');
    await page.locator('#job-form button[type=submit]').click();
    await waitForField('state', 'dead');
    expect(await field('last error').textContent()).toBe('no such order 7');
    expect(await field('stack').textContent()).toMatch(
      /^TypeError: no such order 7\n\s+at .*throws\.mjs:\d+:\d+/,
    );
    expect(await field('dead reason').textContent()).toBe('failed 1 of 1 attempts');
    expect(await field('body').textContent()).toBe(JSON.stringify({ order: 7 }, null, 2));
    expect(await field('name').textContent()).toBe('invoice.render');
    const times = () =>
      page
        .locator('#job-view [data-field="timeline"] li')
        .evaluateAll((items) =>
          items.map((li) => [(li as HTMLElement).dataset.at, li.textContent]),
        );
    const deadTimes = await times();
    expect(deadTimes.map(([at]) => at)).toEqual(['added', 'started', 'died']);
    expect(deadTimes[1]?.[1]).toBe('started: – (not kept)');
    expect(deadTimes[2]?.[1]).toMatch(/after added\)$/);
    await close();

    await page.locator('#job-id').fill('v-done');
    await page.locator('#job-form button[type=submit]').click();
    await waitForField('state', 'done');
    expect(await field('result').textContent()).toBe(
      JSON.stringify({ ok: true, pages: 2 }, null, 2),
    );
    const doneTimes = await times();
    expect(doneTimes.map(([at]) => at)).toEqual(['added', 'due', 'started', 'finished', 'ran']);
    expect(doneTimes[3]?.[1]).toMatch(/\(1\.2 s after started\)$/);
    expect(await page.locator('#job-view .job-actions').textContent()).toBe('It has finished.');
    await close();

    await page.locator('#job-id').fill('v-active');
    await page.locator('#job-form button[type=submit]').click();
    await waitForField('state', 'active');
    expect((await times()).map(([at]) => at)).toEqual(['added', 'due', 'started', 'lease ends']);
    expect(await page.locator('#job-view .job-actions').textContent()).toMatch(/^It is running/);
    await close();

    await page.locator('#job-id').fill('v-bytes');
    await page.locator('#job-form button[type=submit]').click();
    await waitForField('state', 'delayed');
    expect(await field('body').textContent()).toBe('5 bytes\n00000000  3c 73 ff 00 3e');
    expect(await page.locator('#job-view .hint').first().textContent()).toBe('bytes, in hex');
    await close();

    await page.locator('#job-id').fill('v-delayed');
    await page.locator('#job-form button[type=submit]').click();
    await waitForField('name', IMG);
    expect(await field('body').textContent()).toBe(
      JSON.stringify({ order: 1, note: IMG }, null, 2),
    );
    expect(await page.locator('#job-dialog img, #job-dialog script').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    await close();
  });

  it('offers the actions of each state, confirmed in the colour of what they do', async () => {
    const open = async (id: string, state: string) => {
      await page.locator('#job-id').fill(id);
      await page.locator('#job-form button[type=submit]').click();
      await waitForField('state', state);
    };
    const confirmWith = async (label: string, danger: boolean) => {
      await page.locator('#confirm[open]').waitFor();
      const ok = page.locator('#confirm-ok');
      expect(await ok.textContent()).toBe(label);
      expect(await ok.getAttribute('class')).toBe(danger ? 'danger' : 'primary');
      await ok.click();
    };
    await open('v-delayed', 'delayed');
    await page.locator('#job-run-now').click();
    await waitForField('state', 'ready');
    await page.locator('#job-delay').fill('2h');
    await page.locator('#job-run-in').click();
    await waitForField('state', 'delayed');
    expect(((await queue.get('v-delayed'))?.dueAt ?? 0) - Date.now()).toBeGreaterThan(1.9 * HOUR);
    await page.locator('#job-cancel').click();
    await confirmWith('Cancel job', true);
    await page.locator('#job-view .missing').waitFor();
    expect(await queue.get('v-delayed')).toBeNull();
    await close();

    await open('v-dead', 'dead');
    expect(await page.locator('#job-view .job-actions button').allTextContents()).toEqual([
      'Retry',
      'Purge',
    ]);
    await page.locator('#job-retry').click();
    await confirmWith('Retry', false);
    await waitForField('state', 'ready');
    await close();
    await open('v-dead2', 'dead');
    await page.locator('#job-purge').click();
    await confirmWith('Purge', true);
    await page.locator('#job-view .missing').waitFor();
    expect(await queue.get('v-dead2')).toBeNull();
    await close();
    // The lists followed: the dead letters no longer show either.
    await page.locator('#dead tbody tr[data-id="v-dead"]').waitFor({ state: 'detached' });
    expect(browser.errors).toEqual([]);
  });
});
