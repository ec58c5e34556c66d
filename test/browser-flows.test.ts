/// <reference lib="dom" />
// The dashboard's flows in a real browser (Debian's chromium driven by playwright-core) against
// a running launcher: the waiting tab lists a waiting parent, its job view shows the tree below
// it with each node's state and a link that opens that node's view, a child's view links its
// parent, cancelling a child the parent waits for is refused in a toast, and cancelling the
// parent takes its pending children.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { axeViolations, type OpenBrowser, openBrowser } from './helpers/browser.js';
import { httpLauncher } from './helpers/http.js';
import { useRuntimeRedis, waitFor } from './helpers/runtime.js';

const HOUR = 3_600_000;
const redis = useRuntimeRedis();

describe('flows in the dashboard', () => {
  let browser: OpenBrowser;
  let page: Page;
  let queue: Queue;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    const { launcher, url, prefix } = await httpLauncher(redis.server.url, { prefix: 'flowsweb' });
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    stop = () => launcher.stop(0);
    // The refused cancel answers 409, and the view of the cancelled parent, read again, 404.
    browser = await openBrowser({
      allow: (at, status) =>
        (status === 409 && at.endsWith('/cancel')) || (status === 404 && at.includes('/api/jobs/')),
    });
    page = browser.page;
    await page.goto(url);
  });

  afterAll(async () => {
    await browser?.close();
    await queue?.close();
    await stop?.();
  });

  it('shows the tree, links every node, and cancels as the flow allows', async () => {
    const ids = await queue.flows.add({
      body: 'report',
      name: 'report',
      options: { group: 1 },
      children: [
        { body: 'now', name: 'fetch' },
        { body: 'later', options: { delay: HOUR } },
        { body: 'mid', children: [{ body: 'deep', options: { delay: HOUR }, optional: true }] },
      ],
    });
    const [now, later, mid] = ids.children.map((child) => child.id) as [string, string, string];
    const deep = ids.children[2]?.children[0]?.id as string;
    await waitFor('the first child done', async () =>
      (await queue.get(now))?.state === 'done' ? true : undefined,
    );

    await page.locator('#jobs-tab-waiting').click();
    const row = page.locator(`#jobs tbody tr[data-id=${JSON.stringify(ids.id)}]`);
    await row.waitFor();
    await row.locator('td.id').click();
    const tree = page.locator('#job-view [data-field="flow"]');
    await tree.waitFor();
    const node = (id: string) => tree.locator(`li[data-id=${JSON.stringify(id)}]`);
    expect(await page.locator('#job-view [data-field="children"]').textContent()).toBe(
      '3 children: 1 delayed, 1 waiting, 1 done',
    );
    expect(await node(now).getAttribute('data-state')).toBe('done');
    expect(await node(later).getAttribute('data-state')).toBe('delayed');
    expect(await node(mid).getAttribute('data-state')).toBe('waiting');
    expect(await node(deep).getAttribute('data-state')).toBe('delayed');
    expect(await node(deep).textContent()).toContain('(optional)');
    expect(await node(now).textContent()).toContain('fetch');
    // The tree reads as well as the rest of the view.
    expect(await axeViolations(page)).toEqual([]);

    // A child's own view, and back to its parent by the link.
    await node(later).locator('> .id-link').click();
    const parentLink = page.locator('#job-view [data-field="parent"] .id-link');
    await parentLink.waitFor();
    expect(await page.locator('#job-title').textContent()).toBe(`Job ${later}`);
    expect(await parentLink.textContent()).toBe(ids.id);
    // Its parent waits for it: cancelling it is refused, and says why.
    await page.locator('#job-cancel').click();
    await page.locator('#confirm-ok').click();
    await page.getByText(`cancel ${later}: its flow parent ${ids.id} waits for it`).waitFor();
    expect((await queue.get(later))?.state).toBe('delayed');

    await parentLink.click();
    await page.waitForFunction(
      (id) => document.querySelector('#job-title')?.textContent === `Job ${id}`,
      ids.id,
    );
    await page.locator('#job-cancel').click();
    await page.locator('#confirm-ok').click();
    await waitFor('the flow cancelled', async () =>
      (await queue.get(ids.id)) === null ? true : undefined,
    );
    for (const id of [later, mid, deep]) expect(await queue.get(id)).toBeNull();
    expect(browser.errors).toEqual([]);
  });
});
