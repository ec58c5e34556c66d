/**
 * The README's examples work as written. Every `// handler.<ext>` block loads as a handler in a
 * project made by `npm init -y` (CommonJS), and the first one handles a message there; every
 * TypeScript block that imports skyq type-checks under `strict` against the built package; the
 * first library example runs as written against the server one `skyq start` started.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { heldPort, type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  CLI,
  finish,
  ROOT,
  removeTempDirs,
  runCli,
  spawnNode,
  tempDir,
  untilStartReady,
  waitFor,
} from './helpers/runtime.js';

let server: RedisServerHandle;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's fenced blocks of one language, as their text. */
function blocks(lang: string): string[] {
  return [...README.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (m) => m[1] as string,
  );
}

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

it('each handler module the README shows loads in an npm init -y project, and handles a job', async () => {
  const handlers = blocks('js')
    .map((text) => ({ file: /^\/\/ (handler\.[cm]?js)\b/.exec(text)?.[1], text }))
    .filter((h): h is { file: string; text: string } => h.file !== undefined);
  expect(handlers.length).toBeGreaterThanOrEqual(2);

  const project = tempDir('skyq-readme-cjs-');
  const init = spawnSync('npm', ['init', '-y'], { cwd: project, encoding: 'utf8' });
  expect(init.status, init.stderr).toBe(0);
  expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).type).toBe('commonjs');

  for (const [n, { file, text }] of handlers.entries()) {
    const dir = join(project, `h${n}`);
    mkdirSync(dir);
    writeFileSync(join(dir, file), text);
    const where = ['--redis', server.url, '--prefix', `readme${n}`, '--groups', '1'];
    const start = spawnNode(
      CLI,
      ['start', ...where, '--handler', `./${file}`, '--log-dir', 'logs'],
      {},
      [],
      dir,
    );
    try {
      await waitFor(`${file} (block ${n}) to load`, () => {
        if (start.child.exitCode !== null) throw new Error(`${file}: ${start.stderr()}`);
        return /actors ready/.test(start.stdout()) ? true : undefined;
      });
      if (n === 0) {
        const produced = await runCli(['produce', ...where, '--delay', '0'], 'hello\nquit\n');
        const id = /added (\S+)/.exec(produced.stdout)?.[1] as string;
        await waitFor('the README handler to run', () =>
          start.stdout().includes(`handled ${id}`) ? true : undefined,
        );
      }
    } finally {
      start.child.kill('SIGINT');
      await finish(start, '', 30_000);
    }
    expect(start.stderr(), file).not.toMatch(/cannot load handler|Unexpected token/);
  }
});

it('the README TypeScript examples type-check under strict', () => {
  const examples = blocks('ts').filter((text) => /from 'skyq'/.test(text));
  expect(examples.length).toBeGreaterThanOrEqual(2);
  const project = tempDir('skyq-readme-ts-');
  mkdirSync(join(project, 'node_modules/@types'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules/skyq'));
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(project, 'node_modules/@types/node'));
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
  const files = examples.map((text, i) => {
    writeFileSync(join(project, `example${i}.ts`), `${text}\nexport {};\n`);
    return `example${i}.ts`;
  });
  const tsconfig = {
    compilerOptions: {
      strict: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      types: ['node'],
      noEmit: true,
      skipLibCheck: true,
    },
    files,
  };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
    { cwd: project, encoding: 'utf8' },
  );
  expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
});

it("the README's first library example runs as written right after skyq start, from another folder", async () => {
  const [first] = blocks('ts');
  expect(first).toContain('new Queue()');
  const project = tempDir('skyq-readme-first-');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules/skyq'));
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
  // The example is TypeScript: its types are stripped, nothing else.
  writeFileSync(
    join(project, 'first.mjs'),
    transformSync(first as string, { loader: 'ts', format: 'esm' }).code,
  );
  // npm start is skyq start, here in a folder of its own, on a port of the test's own (tests
  // never touch 127.0.0.1:6379); nothing is named anywhere.
  const port = await heldPort();
  const env = { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) };
  const started = tempDir('skyq-readme-start-');
  const start = spawnNode(CLI, ['start', '--log-dir', 'logs'], env, [], started);
  try {
    await untilStartReady(start);
    expect(start.stdout()).toContain('started a private redis-server there');
    const run = await finish(spawnNode(join(project, 'first.mjs'), [], env, [], project));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('true\ndelayed\n');
    // The message is on skyq start's server: the CLI, from the example's folder, finds it.
    const got = await finish(spawnNode(CLI, ['get', 'order:1002'], env, [], project));
    expect(got.stderr).toBe('');
    expect(got.stdout).toContain(`reading redis://:***@127.0.0.1:${port}`);
    expect(got.stdout).toContain('"orderId":"1002"');
  } finally {
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
  }
});
