/**
 * The package as npm ships it: `npm pack`, installed in a fresh `npm init -y` project. It holds
 * what runs and nothing that points elsewhere (no source maps, no benchmark files the CLI does
 * not load), installs without npm's install-scripts warning, passes publint and
 * arethetypeswrong, and works from an ES module, from CommonJS (`require` of an ES module, Node
 * ≥ 20.19), from its bin, and from TypeScript, with or without esModuleInterop.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { finish, ROOT, removeTempDirs, spawnNode, tempDir, waitFor } from './helpers/runtime.js';

let server: RedisServerHandle;
let tarball: string;
let files: string[];
let app: string;
let installLog: string;

const run = (command: string, args: string[], cwd: string) =>
  spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

beforeAll(async () => {
  server = await startStandalone();
  // dist/ is fresh (the suite's global setup): pack it as it is.
  const out = tempDir('skyq-pack-');
  const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], ROOT);
  expect(pack.status, pack.stderr).toBe(0);
  const [packed] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(out, packed?.filename as string);
  files = (packed?.files ?? []).map((file) => file.path);
  app = tempDir('skyq-consumer-');
  expect(run('npm', ['init', '-y'], app).status).toBe(0);
  // From npm's cache where it can: the dependencies are the repository's own.
  const install = run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball],
    app,
  );
  installLog = install.stdout + install.stderr;
  expect(install.status, installLog).toBe(0);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

it('ships what runs, a LICENSE, no source maps, only the benchmark files skyq bench loads', () => {
  expect(files).toContain('LICENSE');
  expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(
    /^MIT License\n\nCopyright \(c\) \d{4} skyq contributors/,
  );
  expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
  expect(files.filter((file) => /\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
  const bench = files.filter((file) => file.startsWith('dist/bench/'));
  expect(bench.length).toBeLessThan(15);
  // The handlers skyq bench's actors load by path (bench/start-cost.ts) are there.
  for (const handler of ['skyq-handler', 'skyq-named-handler', 'skyq-pool-handler'])
    expect(files).toContain(`dist/bench/${handler}.js`);
  const pkg = JSON.parse(readFileSync(join(app, 'node_modules/skyq/package.json'), 'utf8'));
  expect(pkg.repository.url).toMatch(/^git\+https:\/\//);
  expect(pkg.homepage).toMatch(/^https:\/\//);
  // Nothing runs on a consumer's install, so npm has nothing to warn about.
  for (const script of ['preinstall', 'install', 'postinstall', 'prepare'])
    expect(pkg.scripts?.[script]).toBeUndefined();
  expect(installLog).not.toMatch(/install-scripts|allowScripts/);
});

it('passes publint and arethetypeswrong (CommonJS loads it through require of ES modules)', () => {
  const publint = run(bin('publint'), ['run', tarball, '--level', 'warning'], ROOT);
  expect(publint.status, publint.stdout + publint.stderr).toBe(0);
  expect(publint.stdout).toContain('All good!');
  const attw = run(bin('attw'), [tarball, '--ignore-rules', 'cjs-resolves-to-esm'], ROOT);
  expect(attw.status, attw.stdout + attw.stderr).toBe(0);
});

it('works from an ES module, from CommonJS and from its bin', async () => {
  const prefix = `pkg${process.pid}`;
  const options = JSON.stringify({ redis: server.url, prefix, groups: 1 });
  writeFileSync(
    join(app, 'esm.mjs'),
    `import { Queue } from 'skyq';
const queue = new Queue(${options});
const id = await queue.add({ from: 'esm' }, { delay: '1h' });
console.log(id, (await queue.get(id)).state);
await queue.close();
`,
  );
  writeFileSync(
    join(app, 'cjs.cjs'),
    `const { Queue } = require('skyq');
const queue = new Queue(${options});
queue.add({ from: 'cjs' }).then(async (id) => {
  console.log(id, (await queue.get(id)).state);
  await queue.close();
});
`,
  );
  writeFileSync(
    join(app, 'handler.cjs'),
    "module.exports = async (job) => console.log('handled ' + JSON.stringify(job.body));\n",
  );
  const esm = await finish(spawnNode(join(app, 'esm.mjs'), [], {}, [], app));
  expect([esm.code, esm.stderr]).toEqual([0, '']);
  expect(esm.stdout).toMatch(/^\S+ delayed\n$/);
  const cjs = await finish(spawnNode(join(app, 'cjs.cjs'), [], {}, [], app));
  expect([cjs.code, cjs.stderr]).toEqual([0, '']); // no warning either
  expect(cjs.stdout).toMatch(/^\S+ (ready|delayed)\n$/);

  // The bin, its workers and every module the CLI loads (skyq bench's included) came along.
  const skyq = join(app, 'node_modules/skyq/dist/src/cli/main.js');
  expect(existsSync(join(app, 'node_modules/.bin/skyq'))).toBe(true);
  const where = ['--redis', server.url, '--prefix', prefix, '--groups', '1'];
  const start = spawnNode(skyq, ['start', ...where, '--handler', './handler.cjs'], {}, [], app);
  try {
    await waitFor('the installed skyq to handle the CommonJS message', () => {
      if (start.child.exitCode !== null) throw new Error(start.stderr());
      return start.stdout().includes('handled {"from":"cjs"}') ? true : undefined;
    });
  } finally {
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
  }
});

it('type-checks in TypeScript projects, without esModuleInterop too', () => {
  mkdirTypes(app);
  writeFileSync(
    join(app, 'typed.mts'),
    `import { Queue, type Handler } from 'skyq';
interface Order { orderId: string }
export const handler: Handler<Order> = async (job) => job.body.orderId.toUpperCase();
export const queue = new Queue<Order>({ groups: 1 });
`,
  );
  writeFileSync(
    join(app, 'legacy.ts'),
    "import { Queue } from 'skyq';\nexport const q = new Queue();\n",
  );
  for (const [file, module, resolution] of [
    ['typed.mts', 'nodenext', 'nodenext'],
    // An older setup: CommonJS output, node10 resolution, no esModuleInterop.
    ['legacy.ts', 'commonjs', 'node10'],
  ]) {
    const config = {
      compilerOptions: {
        strict: true,
        module,
        moduleResolution: resolution,
        target: 'ES2022',
        noEmit: true,
        types: ['node'],
        skipLibCheck: true,
      },
      files: [file],
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(config));
    const tsc = run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.', '--listFiles'],
      app,
    );
    expect([file, tsc.status], tsc.stdout).toEqual([file, 0]);
    // pino's types default-import without esModuleInterop: none of its files may be reachable
    // from skyq's public types (a consumer checking its libraries would fail in them).
    expect(
      tsc.stdout.split('\n').filter((path) => /node_modules\/(pino|thread-stream)\//.test(path)),
    ).toEqual([]);
  }
});

/** @types/node for the consumer's TypeScript, from this repository (nothing is fetched). */
function mkdirTypes(dir: string): void {
  const types = join(dir, 'node_modules/@types');
  if (!existsSync(join(types, 'node'))) {
    spawnSync('mkdir', ['-p', types]);
    symlinkSync(join(ROOT, 'node_modules/@types/node'), join(types, 'node'));
  }
}
