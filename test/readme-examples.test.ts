/**
 * The README's examples work as written. Every `// handler.<ext>` block loads as a handler in a
 * project made by `npm init -y` (CommonJS), and the first one handles a message there; every
 * TypeScript block that imports skyq type-checks under `strict` against the built package; the
 * block that connects to the embedded server runs as written against one `skyq start` started.
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
  expect(examples.length).toBeGreaterThanOrEqual(3);
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

it("the README's connection to the embedded server works as written, from skyq start's folder", async () => {
  const block = blocks('ts').find((text) => text.includes('redis-password'));
  expect(block).toBeDefined();
  // Tests never touch 127.0.0.1:6379: an example that ignored SKYQ_EMBEDDED_PORT would.
  expect(block).toContain('process.env.SKYQ_EMBEDDED_PORT');
  const project = tempDir('skyq-readme-embedded-');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules/skyq'));
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
  // The example is TypeScript: its types are stripped, nothing else.
  writeFileSync(
    join(project, 'connect.mjs'),
    transformSync(block as string, { loader: 'ts', format: 'esm' }).code,
  );
  const port = await heldPort();
  const env = { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) };
  const start = spawnNode(CLI, ['start', '--log-dir', 'logs'], env, [], project);
  try {
    await untilStartReady(start);
    expect(start.stdout()).toContain('started a private redis-server there');
    const run = await finish(spawnNode(join(project, 'connect.mjs'), [], env, [], project));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const id = /^added (\S+): delayed$/.exec(run.stdout.trim())?.[1];
    expect(id, run.stdout).toBeDefined();
    // The message is on skyq start's server: the CLI, from the same folder, finds it there.
    const got = await finish(spawnNode(CLI, ['get', id as string], env, [], project));
    expect(got.stderr).toBe('');
    expect(got.stdout).toContain('from the library');
  } finally {
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
  }
});
