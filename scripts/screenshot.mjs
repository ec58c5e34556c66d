// npm run docs:screenshot: takes the dashboard's pictures in docs/ from a real run, so they
// stay true to the page: a private redis-server, a launcher of two groups running the demo
// handler (scripts/demo-handler.mjs) under steady traffic, a schedule, named jobs, dead
// letters with their stacks; then Debian's chromium (playwright-core) at 1280 and 420 px wide,
// and the job view of a dead letter. Writes docs/dashboard.png, docs/dashboard-420.png and
// docs/dashboard-job.png. Needs a build (the script runs it) and /usr/bin/chromium.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Queue, startActors } from '../dist/src/index.js';
import { startRedisServer } from '../dist/src/redis/server.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const CHROMIUM = process.env.SKYQ_CHROMIUM ?? '/usr/bin/chromium';
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

if (!existsSync(CHROMIUM)) {
  console.error(`docs:screenshot: ${CHROMIUM} is missing (apt-get install -y chromium)`);
  process.exit(1);
}

const redis = await startRedisServer();
const logDir = mkdtempSync(join(tmpdir(), 'skyq-shot-'));
const options = { redis: redis.url, prefix: 'shop', groups: 2 };
let launcher;
let queue;
let browser;
try {
  launcher = await startActors({
    ...options,
    logDir,
    handler: join(ROOT, 'scripts/demo-handler.mjs'),
    http: { listen: '127.0.0.1:0' },
    attempts: 2,
    backoff: { type: 'fixed', delay: 200 },
  });
  queue = new Queue(options);
  await queue.schedules.upsert('nightly-report', {
    cron: '0 3 * * *',
    tz: 'Europe/Berlin',
    name: 'report.build',
    body: { report: 'sales' },
  });
  await queue.schedules.upsert('cart-sweep', { every: 600_000, name: 'cart.sweep', body: {} });
  // A minute of orders: some run at once, some later, a few fail for good.
  const names = ['email.send', 'invoice.render', 'order.timeout'];
  for (let second = 0; second < 20; second++) {
    await queue.addBulk(
      Array.from({ length: 150 + second * 10 }, (_, i) => ({
        body: { order: 10_000 + second * 1000 + i, total: (i % 90) + 9.99 },
        options: { group: i % 2, name: names[i % 3], delay: (i * 7) % 900 },
      })),
    );
    await sleep(1000);
  }
  await queue.addBulk(
    ['card declined', 'payment gateway timed out', 'address not found'].map((error, i) => ({
      body: { order: 9000 + i, fail: error },
      options: { group: i % 2, name: names[i] },
    })),
  );
  await queue.addBulk(
    Array.from({ length: 40 }, (_, i) => ({
      body: { order: 20_000 + i, action: 'cancel if unpaid' },
      options: { name: 'order.timeout', delay: 2_700_000 + i * 60_000 },
    })),
  );
  await sleep(3000);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(launcher.http.url);
  await page.locator('#dead tbody .id-link').first().waitFor();
  await page.locator('#jobs-tab-delayed').click();
  await page.locator('#jobs tbody .id-link').first().waitFor();
  await sleep(2500);
  await page.screenshot({ path: join(ROOT, 'docs/dashboard.png'), fullPage: true });
  await page.locator('#dead tbody .id-link').first().click();
  await page.locator('#job-view [data-field="stack"]').waitFor();
  await page.screenshot({ path: join(ROOT, 'docs/dashboard-job.png') });
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 420, height: 900 });
  await sleep(2500);
  await page.screenshot({ path: join(ROOT, 'docs/dashboard-420.png'), fullPage: true });
  console.log(
    'docs:screenshot: wrote docs/dashboard.png, docs/dashboard-420.png, docs/dashboard-job.png',
  );
} finally {
  await browser?.close();
  await queue?.close();
  await launcher?.stop(0);
  await redis.stop();
  rmSync(logDir, { recursive: true, force: true });
}
