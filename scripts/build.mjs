// npm run build: a clean dist/ from tsc, the Lua scripts, and one bundled file per worker entry.
//
// The build is made in a folder of its own next to dist/ and moved in only when it is complete,
// file by file: rename(2) over an existing file replaces it at once, so a process running from
// dist/ (tests, a launcher, `npx skyq`) never finds a file missing or half written. (Swapping
// whole trees, the old one renamed away and the new one renamed in, left dist/ missing for the
// few µs between the two calls, and a process that looked then failed.) Files the new build no
// longer has are removed last. The new tree carries the bin's execute bit and the `.built` stamp
// that `npm start` (its prestart script) compares with the sources, so a fresh build is never
// rebuilt by the next command. `npm pack` builds first (prepack).
//
// Every actor thread is a fresh V8 isolate: loaded as separate modules, ioredis, pino, comlink
// and the rest are hundreds of files to resolve, read and compile per thread. One esbuild bundle
// per entry is one file instead. dist/workers/*.js, where the launcher starts threads from
// (src/runtime/worker-path.ts), replace tsc's: the piscina task's bundle itself, and for the
// actor and the coordinator an entry that starts their CommonJS bundle (below).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const CACHED_WORKERS = ['actor', 'coordinator'];

// A fresh folder, so stale outputs (a moved or deleted source) never linger to be loaded by
// mistake; named by pid, so two builds at once do not write into each other.
const OUT = `dist.build-${process.pid}`;
rmSync(OUT, { recursive: true, force: true });
process.on('exit', () => rmSync(OUT, { recursive: true, force: true }));

const tsc = spawnSync(
  process.execPath,
  // No source maps: the package ships dist/ without src/, and a map pointing at sources that are
  // not there helps nobody (and makes bundlers warn).
  [
    require.resolve('typescript/bin/tsc'),
    '-p',
    'tsconfig.json',
    '--outDir',
    OUT,
    '--sourceMap',
    'false',
  ],
  {
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// src/redis/scripts.ts reads its scripts at new URL('../lua/', import.meta.url): that is
// dist/src/lua from the library's own module and dist/lua from a bundle in dist/workers.
for (const dir of [`${OUT}/src/lua`, `${OUT}/lua`]) {
  cpSync('src/lua', dir, { recursive: true });
}

// The dashboard's page (plain HTML, CSS and ES modules) sits next to src/http/page.ts.
cpSync('src/http/page', `${OUT}/src/http/page`, { recursive: true });

/** What every worker bundle is built with; each adds its format, entry and banner. */
const WORKER_BUNDLE = {
  outdir: `${OUT}/workers`,
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
};

// CommonJS packages (ioredis, pino) call require() for Node's built-ins; an ES module bundle
// has no require of its own, so give it one.
const ESM_REQUIRE = {
  js: "import { createRequire as __skyqCreateRequire } from 'node:module'; const require = __skyqCreateRequire(import.meta.url);",
};

// The piscina task stays an ES module: piscina's own thread imports it.
await build({
  ...WORKER_BUNDLE,
  entryPoints: { 'handler-task': 'workers/handler-task.ts' },
  format: 'esm',
  banner: ESM_REQUIRE,
});

// The threads the launcher starts are CommonJS bundles, so that V8 can keep their compiled code
// between starts (src/runtime/bundle-start.ts). import.meta.url, which src/ reads to find the
// Lua scripts, is the bundle's own file URL; import() of the user's handler stays import().
for (const name of CACHED_WORKERS) {
  await build({
    ...WORKER_BUNDLE,
    entryPoints: { [`${name}.bundle`]: `workers/${name}.ts` },
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    define: { 'import.meta.url': '__skyqBundleUrl' },
    // "use strict" first: a directive counts only at the very start, and the sources are ES
    // modules, strict throughout (esbuild's own one comes after this banner).
    banner: {
      js: "'use strict'; const __skyqBundleUrl = require('node:url').pathToFileURL(__filename).href;",
    },
  });
  // tsc's declarations of the entry name its `main`; the entry written below exports nothing.
  rmSync(`${OUT}/workers/${name}.d.ts`);
  const bundle = readFileSync(`${OUT}/workers/${name}.bundle.cjs`);
  const hash = createHash('sha256').update(bundle).digest('hex').slice(0, 16);
  writeFileSync(
    `${OUT}/workers/${name}.js`,
    [
      `// Written by scripts/build.mjs: starts ${name}.bundle.cjs, whose sha-256 begins ${hash},`,
      "// with V8's code cache of an earlier start (src/runtime/bundle-start.ts).",
      "import { startBundle } from '../src/runtime/bundle-start.js';",
      'await startBundle({',
      `  bundle: new URL('./${name}.bundle.cjs', import.meta.url),`,
      `  hash: '${hash}',`,
      "  cacheDir: new URL('../.v8-cache/', import.meta.url),",
      '});',
      '',
    ].join('\n'),
  );
}

// The CLI's entry is a bundle of tsc's output (the same code), split where a command loads its
// code in its action: a run of `skyq` loads a few files instead of ~150, 0.2 CPU-s instead of
// 0.45 for `--version` (test/cli-load.test.ts). It replaces tsc's main.js, its chunks beside it.
// They must stay at that depth (dist/src/<folder>/), where src/ spells its paths from
// import.meta.url: ../lua/, ../http/page/, ../../workers/. The bench stays outside the bundle,
// loaded from dist/bench/ as it is (its handler files are found next to its modules). So does
// piscina: it starts its threads from worker.js beside its own code (`__dirname`), which an ES
// module bundle has no value for (`skyq start --pool` failed with a ReferenceError).
const tscCli = readdirSync(`${OUT}/src/cli`);
await build({
  // Paths (and the comments naming each bundled file) relative to the build's folder, not named
  // after it: chunk names hash their content, and stay the same from one build of the same
  // sources to the next, so a command started just before a build finds the chunks it imports.
  absWorkingDir: join(process.cwd(), OUT),
  entryPoints: ['src/cli/main.js'],
  outdir: 'src/cli',
  allowOverwrite: true,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
  banner: ESM_REQUIRE,
  plugins: [
    {
      name: 'bench-outside',
      setup(build) {
        build.onResolve({ filter: /\/bench\// }, ({ path }) => ({ path, external: true }));
      },
    },
    {
      name: 'piscina-outside',
      setup(build) {
        build.onResolve({ filter: /^piscina$/ }, ({ path }) => ({ path, external: true }));
      },
    },
  ],
});

// tsc's CLI modules are in the bundle now: shipped as well, they would be a second copy that
// nothing loads.
for (const name of tscCli) {
  if (name !== 'main.js') rmSync(`${OUT}/src/cli/${name}`);
}

// tsc writes files 0644; the bin (package.json "bin") must stay runnable as `skyq`.
chmodSync(`${OUT}/src/cli/main.js`, 0o755);
writeFileSync(`${OUT}/.built`, `${new Date().toISOString()}\n`);

moveInto(OUT, 'dist');

/** Moves every file of `from` to the same place under `to`, then removes what `to` has more. */
function moveInto(from, to) {
  const built = new Set(readdirSync(from));
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    const there = lstatSync(target, { throwIfNoEntry: false });
    // A file that became a folder, or the other way round: the one place with a moment's gap.
    if (there && there.isDirectory() !== entry.isDirectory()) rmSync(target, { recursive: true });
    if (entry.isDirectory()) moveInto(source, target);
    else renameSync(source, target);
  }
  for (const name of readdirSync(to)) {
    if (!built.has(name)) rmSync(join(to, name), { recursive: true, force: true });
  }
}
