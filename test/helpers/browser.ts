/// <reference lib="dom" />
/**
 * A real browser for the page suites: Debian's chromium driven by playwright-core, one per test
 * file, with every script error and failed request the page meets collected; and axe-core run
 * in the page (the page's CSP blocks injected scripts, so the context bypasses it).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { tempDir } from './runtime.js';

const CHROMIUM = '/usr/bin/chromium';

export interface OpenBrowser {
  context: BrowserContext;
  page: Page;
  /** script errors, console errors and responses of 400 and above the page met */
  errors: string[];
  close(): Promise<void>;
}

/** `allow(url, status)`: a failed response the test expects (a lookup of a gone job). */
export async function openBrowser(
  options: { width?: number; allow?: (url: string, status: number) => boolean } = {},
): Promise<OpenBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's browser (apt-get install -y chromium)`,
    );
  }
  const profile = tempDir('skyq-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    bypassCSP: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    viewport: { width: options.width ?? 1280, height: 900 },
  });
  context.setDefaultTimeout(20_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('response', (response) => {
    const status = response.status();
    if (status >= 400 && !options.allow?.(response.url(), status))
      errors.push(`${status} ${response.url()}`);
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: string[];
}

/** axe-core's violations on the page as it is now (WCAG 2.x A and AA, and best practices). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document): Promise<AxeResult> } }).axe;
    interface AxeResult {
      violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
    }
    const result = await axe.run(document);
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
  });
}

export interface PlacedBox {
  selector: string;
  found: boolean;
  /** left edge, and the right edge of the box's first pixel (a wide box may run past it) */
  x: number;
  right: number;
  width: number;
  visible: boolean;
}

/**
 * Where each selector's first element lies, measured in one step in the page. The dashboard
 * redraws its charts and tables on every poll: an element a locator found in one call and
 * measured in the next may have been replaced in between, and its box reads as null.
 */
export async function placedBoxes(page: Page, selectors: string[]): Promise<PlacedBox[]> {
  // First each is there (as a locator's measure waited for it); a redraw after this replaces
  // it with another that the measure below finds.
  for (const selector of selectors)
    await page.locator(selector).first().waitFor({ state: 'attached' });
  return page.evaluate(
    (all) =>
      all.map((selector) => {
        const element = document.querySelector(selector);
        if (!element) return { selector, found: false, x: -1, right: -1, width: 0, visible: false };
        const rect = element.getBoundingClientRect();
        const visible =
          rect.width > 0 &&
          rect.height > 0 &&
          element.checkVisibility({ checkVisibilityCSS: true });
        const right = rect.x + Math.min(rect.width, 1);
        return { selector, found: true, x: rect.x, right, width: rect.width, visible };
      }),
    selectors,
  );
}
