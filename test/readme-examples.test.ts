/**
 * Every code block of README.md and docs/*.md works as written (test/helpers/doc-blocks.ts says
 * how a block names its file, or says it is a fragment). In one project made by `npm init -y`
 * (CommonJS), with skyq installed: each handler module loads with `skyq start --handler`; each
 * page's scripts run with node, in the page's order, against a Redis of their own, and print
 * what their `// →` comments say. Every TypeScript block type-checks under `strict`, in one tsc
 * run, in that project set up as docs/typescript.md tells the reader (`"type": "module"`, its
 * tsconfig.json). The README's first producer and consumer run as written right after
 * `skyq start` (npm start), which finds no Redis and starts its own: its handler handles a line
 * `skyq produce` adds.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blocksOf,
  type DocBlock,
  docPages,
  expectedOutput,
  isHandler,
  printedInOrder,
  whereIs,
} from './helpers/doc-blocks.js';
import { heldPort, type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  CLI,
  finish,
  ROOT,
  removeTempDirs,
  spawnNode,
  tempDir,
  untilStartReady,
  waitFor,
} from './helpers/runtime.js';

const PAGES = docPages(ROOT);
const BLOCKS = PAGES.flatMap((page) => blocksOf(ROOT, page));
const CODE = BLOCKS.filter((b) => b.lang === 'js' || b.lang === 'ts');
/** Fragments are few, and each is one on purpose: raise this only with a reason. */
const MOST_FRAGMENTS = 3;

let server: RedisServerHandle;
/** The project `npm init -y` made, with skyq (and @types/node) installed. */
let project: string;

beforeAll(async () => {
  server = await startStandalone();
  project = tempDir('skyq-docs-');
  const init = spawnSync('npm', ['init', '-y'], { cwd: project, encoding: 'utf8' });
  expect(init.status, init.stderr).toBe(0);
  mkdirSync(join(project, 'node_modules/@types'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules/skyq'));
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(project, 'node_modules/@types/node'));
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** A folder of the project for one page's files. */
function folderOf(page: string): string {
  const dir = join(project, page.replace(/[/.]/g, '-'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

it('every JavaScript and TypeScript block names its file, or says it is a fragment', () => {
  expect(PAGES.length).toBeGreaterThan(10);
  const unnamed = CODE.filter((b) => !b.fragment && b.file === undefined).map(whereIs);
  expect(unnamed, 'name the file on the first line (// name.mjs), or mark it fragment').toEqual([]);
  const fragments = CODE.filter((b) => b.fragment).map(whereIs);
  expect(fragments.length, fragments.join(', ')).toBeLessThanOrEqual(MOST_FRAGMENTS);
});

it('each handler module loads in an npm init -y project', async () => {
  expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).type).toBe('commonjs');
  const handlers = CODE.filter((b) => b.lang === 'js' && !b.fragment && isHandler(b));
  expect(handlers.length).toBeGreaterThanOrEqual(4);
  await Promise.all(handlers.map((block, n) => loadHandler(block, n)));
});

async function loadHandler(block: DocBlock, n: number): Promise<void> {
  const dir = join(project, `handler-${n}`);
  mkdirSync(dir);
  const file = block.file as string;
  writeFileSync(join(dir, file), block.text);
  const where = ['--redis', server.url, '--prefix', `handler${n}`, '--groups', '1'];
  const args = ['start', ...where, '--handler', `./${file}`, '--log-dir', 'logs'];
  const start = spawnNode(CLI, args, {}, [], dir);
  try {
    await waitFor(`${whereIs(block)} to load`, () => {
      if (start.child.exitCode !== null) throw new Error(`${whereIs(block)}: ${start.stderr()}`);
      return /actors? ready/.test(start.stdout()) ? true : undefined;
    });
  } finally {
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
  }
  expect(start.stderr(), whereIs(block)).not.toMatch(/cannot load handler|Unexpected token/);
}

// Each page on a database of its own (Redis has 16), its scripts one by one.
describe('each page\u2019s scripts run as written, in order', () => {
  const pages = PAGES.filter((page) =>
    CODE.some((b) => b.page === page && b.lang === 'js' && !b.fragment),
  );
  it.each(pages)('%s', async (page) => {
    const db = pages.indexOf(page) + 1;
    expect(db).toBeLessThan(16);
    const redis = `${server.url}/${db}`;
    const flush = new Redis(redis);
    await flush.flushdb().finally(() => flush.quit());
    const dir = folderOf(page);
    for (const block of CODE.filter((b) => b.page === page && b.lang === 'js' && !b.fragment)) {
      writeFileSync(join(dir, block.file as string), block.text);
      if (isHandler(block)) continue;
      const env = { REDIS_URL: redis };
      const run = await finish(
        spawnNode(join(dir, block.file as string), [], env, [], dir),
        '',
        60_000,
      );
      const said = `${whereIs(block)} printed:\n${run.stdout}${run.stderr}`;
      expect(run.stderr, said).toBe('');
      expect(run.code, said).toBe(0);
      const lines = run.stdout.split('\n');
      expect(printedInOrder(lines, expectedOutput(block)), said).toBe(true);
    }
  });
});

it('every TypeScript block type-checks under strict, set up as docs/typescript.md says', () => {
  const guide = blocksOf(ROOT, 'docs/typescript.md');
  const tsconfig = guide.find((b) => b.lang === 'jsonc' && b.file === 'tsconfig.json');
  expect(tsconfig, 'docs/typescript.md shows a // tsconfig.json block').toBeDefined();
  expect(guide.map((b) => b.text).join('\n')).toContain('npm pkg set type=module');
  const examples = CODE.filter((b) => b.lang === 'ts' && !b.fragment);
  expect(examples.length).toBeGreaterThanOrEqual(4);

  const dir = join(project, 'typescript');
  mkdirSync(dir);
  // `npm pkg set type=module` on the project npm init -y made, as the page says.
  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), (tsconfig as DocBlock).text);
  const names = new Map<string, DocBlock>();
  for (const [n, block] of examples.entries()) {
    const name = `${n}-${block.file?.replace(/\.ts$/, '') ?? 'block'}.ts`;
    names.set(name, block);
    writeFileSync(join(dir, name), `${block.text}\nexport {};\n`);
  }
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.', '--noEmit'],
    { cwd: dir, encoding: 'utf8' },
  );
  // Each error names the block it is in: 3-handler.ts(4,7) → docs/consuming.md:142 (handler.ts).
  const said = tsc.stdout.replace(/^([\w.-]+\.ts)\(/gm, (all, name: string) => {
    const block = names.get(name);
    return block ? `${whereIs(block)} ${all}` : all;
  });
  expect(tsc.status, said + tsc.stderr).toBe(0);
});

it("the README's first producer and consumer run as written right after skyq start", async () => {
  const readme = CODE.filter((b) => b.page === 'README.md' && !b.fragment);
  const producer = readme.find((b) => b.file === 'producer.mjs');
  const handler = readme.find(isHandler);
  expect(producer?.text).toContain('new Queue()');
  expect(handler).toBeDefined();
  // The reader's folder, where skyq imports itself by name (here: a folder of the project skyq
  // is installed in) and where npm start, which is skyq start, runs; on the test's port, never
  // 127.0.0.1:6379; no Redis named anywhere.
  const reader = folderOf('first-steps');
  writeFileSync(join(reader, 'producer.mjs'), (producer as DocBlock).text);
  writeFileSync(join(reader, 'handler.mjs'), (handler as DocBlock).text);
  const port = await heldPort();
  const env = { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) };
  let start = spawnNode(CLI, ['start'], env, [], reader);
  try {
    await untilStartReady(start);
    expect(start.stdout()).toContain('started a private redis-server there');
    const run = await finish(spawnNode(join(reader, 'producer.mjs'), [], env, [], reader));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(printedInOrder(run.stdout.split('\n'), expectedOutput(producer as DocBlock))).toBe(true);
    // The message is on skyq start's server: the CLI finds it.
    const got = await finish(spawnNode(CLI, ['get', 'order:1002'], env, [], reader));
    expect(got.stderr).toBe('');
    expect(got.stdout).toContain(`reading redis://:***@127.0.0.1:${port}`);
    expect(got.stdout).toContain('"orderId":"1002"');

    // Stopped with Ctrl-C, started again with the README's handler: a produced line is handled.
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
    start = spawnNode(CLI, ['start', '--handler', './handler.mjs'], env, [], reader);
    await untilStartReady(start);
    const produced = await finish(
      spawnNode(CLI, ['produce', '--delay', '0'], env, [], reader),
      'hi\n',
    );
    const id = /added (\S+)/.exec(produced.stdout)?.[1] as string;
    await waitFor('the README handler to run', () =>
      start.stdout().includes(`handled ${id}`) ? true : undefined,
    );
  } finally {
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
  }
});
