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
// per entry is one file instead. The bundles replace tsc's dist/workers/*.js, which is where the
// launcher starts threads from (src/runtime/worker-path.ts).
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const WORKERS = ['actor', 'coordinator', 'handler-task'];

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

await build({
  entryPoints: Object.fromEntries(WORKERS.map((name) => [name, `workers/${name}.ts`])),
  outdir: `${OUT}/workers`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
  // CommonJS packages (ioredis, pino) call require() for Node's built-ins; an ES module bundle
  // has no require of its own, so give it one.
  banner: {
    js: "import { createRequire as __skyqCreateRequire } from 'node:module'; const require = __skyqCreateRequire(import.meta.url);",
  },
});

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
