/**
 * The worker threads start their CommonJS bundle through src/runtime/bundle-start.ts, from the
 * V8 code cache an earlier start left (issue 26: ten isolates compiling the same bundle). Tried
 * here on a small bundle, each start in a process of its own as a thread's would be: the cache
 * is written, taken, refused when it is garbage (and written again), never needed where it
 * cannot be written, and a bundle run from it still loads an ES module through the importer its
 * entry hands over (an import() compiled into cached code fails on Node 20).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, removeTempDirs, tempDir } from './helpers/runtime.js';

afterAll(removeTempDirs);

const START = pathToFileURL(join(ROOT, 'dist/src/runtime/bundle-start.js')).href;

/** A bundle whose main() imports an ES module with the importer it is given. */
function fixtureBundle(): { dir: string; bundle: string } {
  const dir = tempDir('skyq-bundle-');
  writeFileSync(join(dir, 'value.mjs'), 'export const value = 42;\n');
  const bundle = join(dir, 'fixture.bundle.cjs');
  writeFileSync(
    bundle,
    [
      "const { pathToFileURL } = require('node:url');",
      'exports.main = async (importer) => {',
      "  const { value } = await importer(pathToFileURL(__dirname + '/value.mjs').href);",
      "  console.log('value ' + value);",
      '};',
    ].join('\n'),
  );
  return { dir, bundle };
}

/** One start in a fresh process: what it printed (the value, then the cache outcome). */
function startOnce(bundle: string, cacheDir: string): string[] {
  const script = [
    `import { startBundle } from ${JSON.stringify(START)};`,
    'const outcome = await startBundle({',
    `  bundle: new URL(${JSON.stringify(pathToFileURL(bundle).href)}),`,
    "  hash: 'f1x7',",
    `  cacheDir: new URL(${JSON.stringify(`${pathToFileURL(cacheDir).href}/`)}),`,
    '  writeAfterMs: 0,',
    '});',
    "console.log('cache ' + outcome);",
    'await new Promise((resolve) => setTimeout(resolve, 200));', // the write's turn
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout.trim().split('\n');
}

describe('starting a worker bundle from the V8 code cache', () => {
  it('writes the cache, takes it, and loads ES modules through the importer from it', () => {
    const { dir, bundle } = fixtureBundle();
    const cacheDir = join(dir, 'cache');
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache none']);
    const files = readdirSync(cacheDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^fixture\.bundle\.cjs-f1x7-.+\.bin$/);
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache accepted']);
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache accepted']);
  });

  it('refuses a cache that is garbage, runs all the same, and writes a good one', () => {
    const { dir, bundle } = fixtureBundle();
    const cacheDir = join(dir, 'cache');
    startOnce(bundle, cacheDir);
    const [file] = readdirSync(cacheDir);
    writeFileSync(join(cacheDir, file as string), Buffer.alloc(4096, 7));
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache rejected']);
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache accepted']);
  });

  it('runs as before where no cache can be written', () => {
    const { dir, bundle } = fixtureBundle();
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const cacheDir = join(blocker, 'cache');
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache none']);
    expect(startOnce(bundle, cacheDir)).toEqual(['value 42', 'cache none']);
    expect(existsSync(cacheDir)).toBe(false);
  });
});
