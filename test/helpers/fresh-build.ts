/**
 * Worker threads start from dist/ (src/runtime/worker-path.ts), so a bare `npx vitest run FILE`
 * after an edit would test the previous build's actor code. The global setup calls this: it
 * compares the newest file the build reads with the oldest file the tests start from, and runs
 * the build when dist/ is older (or missing); a build that fails stops the run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the build reads: tsconfig's include (src, workers, bench), the Lua and page files in it. */
const INPUTS = ['src', 'workers', 'bench', 'scripts/build.mjs', 'tsconfig.json', 'package.json'];
/** What tests start: the worker bundles (written last), the library and the CLI. */
const OUTPUTS = [
  'dist/workers/actor.js',
  'dist/workers/coordinator.js',
  'dist/workers/handler-task.js',
  'dist/src/index.js',
  'dist/src/cli/main.js',
  'dist/src/lua/claim.lua',
];

function newest(root: string, path: string): { file: string; ms: number } {
  const full = join(root, path);
  if (!existsSync(full)) return { file: path, ms: 0 };
  const stat = statSync(full);
  if (!stat.isDirectory()) return { file: path, ms: stat.mtimeMs };
  let best = { file: path, ms: 0 };
  for (const name of readdirSync(full)) {
    const found = newest(root, join(path, name));
    if (found.ms > best.ms) best = found;
  }
  return best;
}

/** Why dist/ cannot be trusted, or undefined when every output is newer than every input. */
export function staleBuild(root: string): string | undefined {
  const input = INPUTS.map((path) => newest(root, path)).reduce((a, b) => (b.ms > a.ms ? b : a));
  for (const output of OUTPUTS) {
    const full = join(root, output);
    if (!existsSync(full)) return `${output} is missing`;
    if (statSync(full).mtimeMs < input.ms) {
      return `${output} is older than ${relative(root, join(root, input.file))}`;
    }
  }
  return undefined;
}

/** Builds when dist/ is stale; throws when the build fails or leaves it stale. */
export function ensureFreshBuild(root: string, say: (line: string) => void): void {
  const why = staleBuild(root);
  if (why === undefined) return;
  say(`skyq tests: ${why}; running npm run build first`);
  const run = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  const still = staleBuild(root);
  if (run.status !== 0 || still !== undefined) {
    throw new Error(`skyq tests refuse a stale dist/: the build failed (${still ?? why})`);
  }
}
