/**
 * The code blocks of README.md and docs/*.md, as test/readme-examples.test.ts runs them.
 *
 * A JavaScript or TypeScript block names its file on its first line (`// handler.mjs`,
 * `// producer.mjs`, `// handler.ts`), as a reader saves it; a block that cannot run or
 * type-check on its own says so in its info string (```ts fragment). A `js` block named
 * `handler…` is a handler module; any other `js` block is a script, run with node in its page's
 * order. A line `console.log(…); // → text` (or a comment line `// → text` after a loop) says
 * what the script prints there.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocBlock {
  /** the page, relative to the repository: README.md, docs/producing.md */
  page: string;
  /** the line of its opening fence, from 1 */
  line: number;
  /** the info string's first word: js, ts, sh, jsonc, … */
  lang: string;
  /** marked `fragment` in its info string: not run, not type-checked */
  fragment: boolean;
  /** the file its first line names, if it names one */
  file: string | undefined;
  text: string;
}

const FENCE = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
const FILE_LINE = /^\/\/ ([\w.-]+\.(?:[cm]?js|ts|json))\b/;

/** README.md and every docs/*.md, in that order. */
export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** The fenced blocks of one page, in order. */
export function blocksOf(root: string, page: string): DocBlock[] {
  const text = readFileSync(join(root, page), 'utf8');
  return [...text.matchAll(FENCE)].map((m) => {
    const [lang = '', ...rest] = (m[1] as string).trim().split(/\s+/);
    const body = m[2] as string;
    return {
      page,
      line: text.slice(0, m.index).split('\n').length,
      lang,
      fragment: rest.includes('fragment'),
      file: FILE_LINE.exec(body)?.[1],
      text: body,
    };
  });
}

/** Where a block is, for messages: docs/producing.md:42 (add.mjs). */
export const whereIs = (block: DocBlock) =>
  `${block.page}:${block.line}${block.file ? ` (${block.file})` : ''}`;

/** A js block that is a handler module (loaded by `skyq start --handler`), not a script. */
export const isHandler = (block: DocBlock) => /^handler[\w-]*\.[cm]?js$/.test(block.file ?? '');

/**
 * What a script says it prints: the text after `// → ` on its console.log lines and on comment
 * lines of their own, in order.
 */
export function expectedOutput(block: DocBlock): string[] {
  return block.text
    .split('\n')
    .filter((line) => line.includes('console.log(') || line.trim().startsWith('// → '))
    .map((line) => /\/\/ → (.*)$/.exec(line)?.[1])
    .filter((text): text is string => text !== undefined);
}

/** Whether `lines` hold every expected line, whole and in order (other lines may come between). */
export function printedInOrder(lines: string[], expected: string[]): boolean {
  let at = 0;
  for (const want of expected) {
    while (at < lines.length && lines[at]?.trim() !== want) at++;
    if (at === lines.length) return false;
    at++;
  }
  return true;
}
