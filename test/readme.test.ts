// The README is a front page (issue 27, 3.1): 200 lines at most, the two set-up commands, and
// links into docs/ that lead somewhere. Every relative link of the README and docs/*.md names a
// file that exists and, with a #fragment, a heading that page has (as GitHub makes anchors).
// Its examples run in test/readme-examples.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect, it } from 'vitest';
import { docPages } from './helpers/doc-blocks.js';
import { ROOT } from './helpers/runtime.js';

const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const README = read('README.md');
/** Built by `npm run docs:api` and git-ignored: the README links it and says how to build it. */
const BUILT = new Set(['docs/api']);

/** Text outside fenced code blocks, where links and headings are. */
const prose = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** A heading's anchor as GitHub makes it (github-slugger): lower case, punctuation dropped. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[\u2000-\u206F\u2E00-\u2E7F\\'!"#$%&()*+,./:;<=>?@[\]^`{|}~]/g, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(read(page)).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchor(heading as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

it('is a front page: at most 200 lines, with the two set-up commands', () => {
  expect(README.split('\n').length).toBeLessThanOrEqual(200);
  expect(README).toContain('## Set-up: two commands');
  expect(README).toMatch(/^npm install && npm start {3}# /m);
  expect(README).toMatch(/^npm run test:all {11}# /m);
  for (const page of ['OPERATIONS', 'RELIABILITY', 'BENCHMARKS', 'typescript', 'producing']) {
    expect(README).toContain(`](docs/${page}.md`);
  }
  expect(README).toContain('npm run docs:api');
  // Every page of the guide is reachable from the front page.
  const unlinked = docPages(ROOT).filter(
    (page) => page !== 'README.md' && !README.includes(`](${page}`),
  );
  expect(unlinked).toEqual([]);
});

it('every link of the README and docs/*.md leads to a file, and to a heading it names', () => {
  const broken: string[] = [];
  for (const page of docPages(ROOT)) {
    for (const [, target] of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target as string)) continue; // https:, mailto:
      const [path = '', fragment] = (target as string).split('#');
      const file = path === '' ? page : normalize(join(dirname(page), path)).replace(/\/$/, '');
      if (BUILT.has(file)) continue;
      if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no ${file})`);
      else if (fragment && file.endsWith('.md') && !anchorsOf(file).has(fragment))
        broken.push(`${page}: ${target} (no heading #${fragment} in ${file})`);
    }
  }
  expect(broken).toEqual([]);
});
