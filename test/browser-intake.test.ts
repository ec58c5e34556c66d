/// <reference lib="dom" />
// The dashboard's intake table in a real browser (Debian's chromium driven by playwright-core):
// a launcher's list and sorted set each have a row, the set marked with its unit, with what
// was moved; a key of the wrong type shows its error.
import { existsSync, rmSync } from 'node:fs';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { Launcher } from '../src/index.js';
import { httpLauncher } from './helpers/http.js';
import { redisNow } from './helpers/queue.js';
import { tempDir, useRuntimeRedis } from './helpers/runtime.js';

const CHROMIUM = '/usr/bin/chromium';
const redis = useRuntimeRedis();

describe('the intake table in a browser', () => {
  let context: BrowserContext | null = null;
  let launcher: Launcher | null = null;
  const profile = tempDir('skyq-chromium-');
  afterAll(async () => {
    await context?.close();
    await launcher?.stop(0);
    rmSync(profile, { recursive: true, force: true });
  });

  it('shows the list and the sorted sets, each with what it moved', async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's browser (apt-get install -y chromium)`,
      );
    }
    await redis.client.set('bintake:wrong', 'a string');
    const started = await httpLauncher(redis.server.url, {
      prefix: 'bintake',
      intake: ['bintake:inbox'],
      zsetIntake: [
        { key: 'bintake:seta', scoreUnit: 'ms' },
        { key: 'bintake:wrong', scoreUnit: 's' },
      ],
    });
    launcher = started.launcher;
    await redis.client.lpush('bintake:inbox', 'one', 'two');
    const now = await redisNow(redis.client);
    await redis.client.zadd('bintake:seta', now, 'a', now, 'b', now, 'c', now + 3_600_000, 'later');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
    });
    context.setDefaultTimeout(20_000);
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(started.url);
    const rows = () =>
      page.$$eval('#intake tbody tr', (trs) =>
        trs.map((tr) =>
          ['list', 'length', 'items', 'error'].map(
            (name) => tr.querySelector(`[data-cell="${name}"]`)?.textContent ?? '',
          ),
        ),
      );
    // The page reads what launchers publish (about once a second).
    await page.waitForFunction(() => {
      const cells = Array.from(document.querySelectorAll('#intake [data-cell="items"]'));
      return cells.map((c) => c.textContent).join(',') === '2,3,0';
    });
    const shown = await rows();
    expect(shown.map(([list, length, items]) => [list, length, items])).toEqual([
      ['bintake:inbox', '0', '2'],
      ['bintake:seta (sorted set, ms)', '1', '3'],
      ['bintake:wrong (sorted set, s)', '–', '0'],
    ]);
    expect(shown[2]?.[3]).toMatch(/WRONGTYPE/);
    expect(await page.locator('#intake').isVisible()).toBe(true);
  });
});
