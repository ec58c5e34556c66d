// npm run build: a clean dist/ from tsc, the Lua scripts, and one bundled file per worker entry.
//
// Every actor thread is a fresh V8 isolate: loaded as separate modules, ioredis, pino, comlink
// and the rest are hundreds of files to resolve, read and compile per thread. One esbuild bundle
// per entry is one file instead. The bundles replace tsc's dist/workers/*.js, which is where the
// launcher starts threads from (src/runtime/worker-path.ts).
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const WORKERS = ['actor', 'coordinator', 'handler-task'];

// Stale outputs (a moved or deleted source) must not linger and be loaded by mistake.
rmSync('dist', { recursive: true, force: true });

const tsc = spawnSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'],
  {
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// src/redis/scripts.ts reads its scripts at new URL('../lua/', import.meta.url): that is
// dist/src/lua from the library's own module and dist/lua from a bundle in dist/workers.
for (const dir of ['dist/src/lua', 'dist/lua']) {
  cpSync('src/lua', dir, { recursive: true });
}

// The dashboard's page (plain HTML, CSS and ES modules) sits next to src/http/page.ts.
cpSync('src/http/page', 'dist/src/http/page', { recursive: true });

await build({
  entryPoints: Object.fromEntries(WORKERS.map((name) => [name, `workers/${name}.ts`])),
  outdir: 'dist/workers',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  // CommonJS packages (ioredis, pino) call require() for Node's built-ins; an ES module bundle
  // has no require of its own, so give it one.
  banner: {
    js: "import { createRequire as __skyqCreateRequire } from 'node:module'; const require = __skyqCreateRequire(import.meta.url);",
  },
});
