/// <reference lib="dom" />
// The page at 1280 and 420 px (issue 27, 2.4, 2.5, 2.7) in a real browser, against a launcher
// with work in every table: axe-core finds no violation on any Jobs tab nor in the job view
// (it found svg-img-alt, empty-table-header and, at 420 px, scrollable-region-focusable); no
// table is wider than its section and the page never scrolls sideways (at 420 px rows are
// cards, ids beside their buttons); figures stand right-aligned under right-aligned headings;
// the two done figures say which is which; dead letters name their jobs; a retry is confirmed
// with a plain button, a purge with a red one.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import {
  type AxeViolation,
  axeViolations,
  type OpenBrowser,
  openBrowser,
  placedBoxes,
} from './helpers/browser.js';
import { httpLauncher } from './helpers/http.js';
import { useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const STATES = ['delayed', 'ready', 'active', 'done', 'dead', 'waiting'];

describe('the page at 1280 and 420 px', () => {
  let browser: OpenBrowser;
  let page: Page;
  let queue: Queue;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    const { launcher, url, prefix } = await httpLauncher(redis.server.url, { prefix: 'a11y' });
    stop = () => launcher.stop(0);
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await redis.client.set('a11y:failing', '1');
    await queue.addBulk(
      Array.from({ length: 4 }, (_, i) => ({
        body: { failWhile: 'a11y:failing', error: `refused ${'very-long-word'.repeat(i * 4)}` },
        options: { group: i % 2, attempts: 1, name: 'payment.capture' },
      })),
    );
    await queue.addBulk(
      Array.from({ length: 30 }, (_, i) => ({
        body: { order: i, note: 'x'.repeat(i * 10) },
        options: { group: i % 2, name: 'email.send', delay: i < 20 ? 0 : 3_600_000 + i },
      })),
    );
    await queue.schedules.upsert('nightly-report-with-a-long-name', {
      cron: '0 3 * * *',
      name: 'report.build',
      body: {},
    });
    await waitFor('4 dead letters', async () =>
      (await queue.counts()).reduce((n, c) => n + c.dead, 0) === 4 ? true : undefined,
    );
    browser = await openBrowser();
    page = browser.page;
    await page.goto(url);
    await page.locator('#dead tbody .id-link').first().waitFor();
    await page.locator('#actors tbody tr').first().waitFor();
    await page.locator('#schedules tbody tr').first().waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await queue?.close();
    await stop?.();
  });

  const tab = async (state: string) => {
    await page.locator(`#jobs-tab-${state}`).click();
    await page.waitForFunction(
      (s) => document.querySelector(`#jobs-tab-${s}`)?.getAttribute('aria-selected') === 'true',
      state,
    );
    await page.waitForFunction(() => document.querySelector('#jobs tbody tr'));
  };

  /** Tables wider than their sections, and sections or the page that scroll sideways. */
  const overflows = (p: Page) =>
    p.evaluate(() => {
      const out: string[] = [];
      const root = document.documentElement;
      if (root.scrollWidth > root.clientWidth)
        out.push(`page ${root.scrollWidth} > ${root.clientWidth}`);
      for (const table of Array.from(document.querySelectorAll('main table'))) {
        const section = table.closest('section') as HTMLElement;
        if (section.hidden) continue;
        const inner =
          section.clientWidth -
          Number.parseFloat(getComputedStyle(section).paddingLeft) -
          Number.parseFloat(getComputedStyle(section).paddingRight);
        const width = table.getBoundingClientRect().width;
        if (width > inner + 1)
          out.push(`#${section.id} table ${Math.round(width)} > ${Math.round(inner)}`);
        if (section.scrollWidth > section.clientWidth)
          out.push(`#${section.id} scrolls ${section.scrollWidth} > ${section.clientWidth}`);
      }
      return out;
    });

  it('has no axe violation and no table wider than its section, on every tab, at both widths', async () => {
    const found: (AxeViolation & { where: string })[] = [];
    const wide: string[] = [];
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(1500); // charts redraw to their width on the next poll
      for (const state of STATES) {
        await tab(state);
        for (const v of await axeViolations(page))
          found.push({ ...v, where: `${width} px, ${state} tab` });
        wide.push(...(await overflows(page)).map((o) => `${width} px, ${state} tab: ${o}`));
      }
      await page.locator('#dead tbody .id-link').first().click();
      await page
        .locator('#job-view [data-field="stack"], #job-view [data-field="last error"]')
        .first()
        .waitFor();
      for (const v of await axeViolations(page))
        found.push({ ...v, where: `${width} px, job view` });
      await page.keyboard.press('Escape');
    }
    expect(found).toEqual([]);
    expect(wide).toEqual([]);
  }, 120_000);

  it('keeps each row’s id beside its buttons at 420 px', async () => {
    await page.setViewportSize({ width: 420, height: 900 });
    await tab('delayed');
    const boxes = await placedBoxes(page, [
      '#jobs tbody tr:first-child .id-link',
      '#jobs tbody tr:first-child button[data-action="cancel"]',
      '#dead tbody tr:first-child .id-link',
      '#dead tbody tr:first-child input[type=checkbox]',
      '#groups tbody tr:first-child button.toggle',
      '#schedules tbody tr:first-child button',
    ]);
    for (const box of boxes) {
      expect(box.found && box.visible, box.selector).toBe(true);
      expect(box.x, box.selector).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, box.selector).toBeLessThanOrEqual(420);
    }
    // A card shows each value under its column's name.
    const label = await page
      .locator('#jobs tbody tr:first-child td.id')
      .evaluate((td) => getComputedStyle(td, '::before').content);
    expect(label).toBe('"id"');
  });

  it('reads plainly: figures under right-aligned headings, two done figures, names, confirmations', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const align = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((node) => getComputedStyle(node).textAlign);
    for (const [heading, cell] of [
      ['#groups thead th:nth-child(2)', '#groups tbody td[data-cell="delayed"]'],
      ['#actors thead th:nth-child(6)', '#actors tbody td[data-cell="done"]'],
      ['#dead thead th:nth-child(6)', '#dead tbody td.num'],
    ]) {
      expect(await align(heading), heading).toBe('right');
      expect(await align(cell as string), cell).toBe('right');
    }
    expect(
      await page.locator('#total-done').locator('xpath=..').locator('.label').textContent(),
    ).toBe('done since start');
    expect(await page.locator('#jobs-tab-done').textContent()).toMatch(/^done \(kept\) /);
    const heads = await page.locator('#dead thead th').allTextContents();
    expect(heads.slice(1, 4)).toEqual(['id', 'name', 'group']);
    expect(await page.locator('#dead tbody td.name').first().textContent()).toBe('payment.capture');
    for (const [button, label, kind] of [
      ['#dead-retry-all', 'Retry', 'primary'],
      ['#dead-purge-all', 'Purge', 'danger'],
    ]) {
      await page.locator(button as string).click();
      await page.locator('#confirm[open]').waitFor();
      expect(await page.locator('#confirm-ok').textContent()).toBe(label);
      expect(await page.locator('#confirm-ok').getAttribute('class')).toBe(kind);
      await page.locator('#confirm-cancel').click();
    }
    expect((await queue.counts()).reduce((n, c) => n + c.dead, 0)).toBe(4);
    expect(browser.errors).toEqual([]);
  });
});
