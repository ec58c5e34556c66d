/**
 * Set-up speed: `npm start` runs `skyq start` from dist/, and the first `npx skyq …` does not
 * rebuild. npm (7+) runs a project's own bin by linking the project into its npx cache, which
 * runs the project's `prepare` script; `prepare` builds only when dist/ is older than a source.
 * Checked on a copy of the project with a private npx cache, offline.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT, removeTempDirs, tempDir } from './helpers/runtime.js';

afterAll(removeTempDirs);

const npm = (cwd: string, args: string[]) =>
  spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: 120_000 });

it('npm start is skyq start from dist/', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  expect(pkg.scripts.start).toBe('node dist/src/cli/main.js start');
  const run = npm(ROOT, ['start', '--silent', '--', '--help']);
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('Usage: skyq start [options]');
});

it('the first npx skyq skips the build while dist/ is current, and prepare rebuilds a stale one', () => {
  // The project's sources, dist/ and package.json (its build replaced by a marker, so a
  // build that should not happen shows, and takes no time), with the real node_modules.
  const copy = tempDir('skyq-setup-');
  for (const part of ['src', 'workers', 'bench', 'scripts', 'tsconfig.json', 'dist'])
    cpSync(join(ROOT, part), join(copy, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  pkg.scripts.build = 'echo BUILD-RAN';
  writeFileSync(join(copy, 'package.json'), JSON.stringify(pkg, null, 2));
  const stamp = join(copy, 'dist/.built');
  writeFileSync(stamp, '');
  const later = new Date(Date.now() + 10_000);
  utimesSync(stamp, later, later); // built after every source was written

  const cache = tempDir('skyq-npx-cache-');
  const run = npm(copy, [
    'exec',
    '--offline',
    '--cache',
    cache,
    '--foreground-scripts',
    '--',
    'skyq',
    'stats',
    '--help',
  ]);
  const out = run.stdout + run.stderr;
  expect(run.status, out).toBe(0);
  expect(run.stdout).toContain('Usage: skyq stats [options]');
  expect(out).toContain('skyq: dist/ is up to date'); // prepare ran, as npx links the project
  expect(out).not.toContain('BUILD-RAN');

  const edited = new Date(Date.now() + 20_000);
  utimesSync(join(copy, 'src/queue/queue.ts'), edited, edited);
  const prepare = npm(copy, ['run', 'prepare']);
  expect(prepare.status).toBe(0);
  expect(prepare.stdout).toContain('BUILD-RAN');
  expect(statSync(stamp).mtimeMs).toBeLessThan(later.getTime()); // stamped again by the build
});
