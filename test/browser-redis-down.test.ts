/// <reference lib="dom" />
// The page while Redis does not answer (issue 27, 2.6), in a real browser, with a real
// redis-server stopped and started on its port: a page opened while it is down showed every
// depth as 0 and every group "running", with live Pause buttons. Now an unknown figure is –,
// no group is said to run, and every action is disabled until Redis answers; then the figures
// come and the actions are enabled again; and when Redis goes away under an open page, the
// same again.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { type OpenBrowser, openBrowser } from './helpers/browser.js';
import { freshPrefix } from './helpers/queue.js';
import {
  expectServedBy,
  heldPort,
  type RedisServerHandle,
  startStandalone,
} from './helpers/redis.js';
import { tempDir } from './helpers/runtime.js';

const TOTALS = ['delayed', 'ready', 'active', 'dead', 'done'];
/** every button that changes something, when the page has one of each */
const ACTIONS = '#pause-all, #resume-all, #dead-retry-all, #dead-purge-all, #groups button.toggle';

describe('the page while Redis is down', () => {
  let server: RedisServerHandle;
  let port: number;
  let dir: string;
  let dashboard: HttpHandle;
  let browser: OpenBrowser;
  let page: Page;
  const prefix = freshPrefix('down');

  beforeAll(async () => {
    port = await heldPort();
    dir = tempDir('skyq-down-');
    // Kept on disk (appendonly), so what was added is there again after the restart.
    server = await startStandalone({ port, dir, appendonly: true });
    const queue = new Queue({ redis: server.url, prefix, groups: 2, attempts: 1 });
    await queue.add('later', { group: 1, delay: 3_600_000 });
    await queue.add('doomed', { group: 0 });
    const [message] = await queue.claim(0, 1);
    if (!message) throw new Error('nothing claimed');
    await queue.fail(message, new Error('refused'));
    await queue.close();
    await server.stop();
    dashboard = await serveDashboard(
      { redis: server.url, prefix, groups: 2 },
      { listen: '127.0.0.1:0' },
    );
    browser = await openBrowser({ allow: () => true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await server?.stop();
  });

  const view = () =>
    page.evaluate(
      ([totals, actions]) => ({
        totals: (totals as string[]).map((t) => document.getElementById(`total-${t}`)?.textContent),
        depths: Array.from(document.querySelectorAll('#groups tbody td.num')).map(
          (td) => td.textContent,
        ),
        states: Array.from(document.querySelectorAll('#groups tbody [data-cell="state"]')).map(
          (td) => td.textContent ?? '',
        ),
        enabled: Array.from(document.querySelectorAll(actions as string)).map(
          (b) => !(b as HTMLButtonElement).disabled,
        ),
      }),
      [TOTALS, ACTIONS] as const,
    );
  /** Polls the page until `test` holds (or fails after 30 s with the last view). */
  const until = async (what: string, test: (v: Awaited<ReturnType<typeof view>>) => boolean) => {
    const deadline = Date.now() + 30_000;
    let last = await view();
    while (!test(last)) {
      if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(last)}`);
      await page.waitForTimeout(250);
      last = await view();
    }
    return last;
  };
  const unknown = (v: Awaited<ReturnType<typeof view>>) =>
    v.totals.every((t) => t === '–') &&
    v.depths.length === 8 &&
    v.depths.every((d) => d === '–') &&
    v.states.every((s) => s.startsWith('unknown')) &&
    v.enabled.length === 6 &&
    v.enabled.every((e) => !e);

  it('shows – for what it cannot know and disables every action until Redis answers', async () => {
    page = browser.page;
    await page.goto(dashboard.url);
    // Several polls while down: never a 0 for a depth, never "running", no live action.
    for (let poll = 0; poll < 4; poll++) {
      const shown = await until('a page opened while Redis is down', unknown);
      expect(shown.states.some((s) => s.includes('running'))).toBe(false);
      await page.waitForTimeout(700);
    }
    expect(await page.locator('#status').textContent()).toMatch(/Redis|no answer/);

    server = await startStandalone({ port, dir, appendonly: true });
    await expectServedBy(server.url, server.pid);
    const up = await until(
      'the figures once Redis answers',
      (v) => v.totals[0] === '1' && v.totals[3] === '1' && v.enabled.every((e) => e),
    );
    expect(up.depths).toEqual(['0', '0', '0', '1', '1', '0', '0', '0']);
    expect(up.states).toEqual(['running', 'running']);
    expect(up.enabled).toEqual([true, true, true, true, true, true]);

    // Redis goes away under the open page: the last figures are not shown as now.
    await server.stop();
    await until('the page once Redis went away', unknown);
  }, 120_000);
});
