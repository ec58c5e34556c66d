/**
 * Set-up speed: `npm start` runs `skyq start` from dist/, building it first (its `prestart`
 * script) only when dist/ is missing or older than a source; `npx skyq …` then runs it as it is.
 * No `prepare` script: npm 11 warns every consumer of a package that has one. Checked on a copy
 * of the project with a private npx cache, offline.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  watch,
  writeFileSync,
} from 'node:fs';
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

it('npm start skips the build while dist/ is current and rebuilds a stale one; npx skyq never builds', () => {
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
  expect(out).not.toContain('BUILD-RAN');

  const started = npm(copy, ['start', '--foreground-scripts', '--', '--help']);
  expect(started.status, started.stderr).toBe(0);
  expect(started.stdout).toContain('skyq: dist/ is up to date');
  expect(started.stdout).toContain('Usage: skyq start [options]');
  expect(started.stdout).not.toContain('BUILD-RAN');

  const edited = new Date(Date.now() + 20_000);
  utimesSync(join(copy, 'src/queue/queue.ts'), edited, edited);
  const stale = npm(copy, ['run', 'prestart']);
  expect(stale.status).toBe(0);
  expect(stale.stdout).toContain('BUILD-RAN');
});

it('npm run build keeps dist/ in place while it builds, the bin executable and dist/ current', async () => {
  // A copy of the project with today's dist/, built for real by its own build script.
  const copy = tempDir('skyq-build-');
  for (const part of [
    'src',
    'workers',
    'bench',
    'scripts',
    'tsconfig.json',
    'package.json',
    'dist',
  ])
    cpSync(join(ROOT, part), join(copy, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));

  // What a running launcher or test loads from dist/ while the build runs beside it must never
  // be missing, not even for the few µs between a removal and a rename (which a 2 ms timer
  // missed but now and then in CI). The kernel tells each change of a folder's entries
  // (inotify): a file replaced in place by a rename is one change of its name, a file removed
  // and then renamed in is two, and the folders on the way are never replaced.
  const changes = new Map<string, number>();
  const watched: [dir: string, names: string[]][] = [
    ['', ['dist']],
    ['dist', ['src', 'workers']],
    ['dist/src', ['cli']],
    ['dist/workers', ['coordinator.js']],
    ['dist/src/cli', ['main.js']],
  ];
  const watchers = watched.map(([dir, names]) =>
    watch(join(copy, dir), (_, name) => {
      const path = join(dir, String(name));
      if (names.includes(String(name))) changes.set(path, (changes.get(path) ?? 0) + 1);
    }),
  );
  const build = spawn('npm', ['run', 'build'], { cwd: copy, stdio: 'ignore' });
  const status = await new Promise<number | null>((resolve) => build.on('exit', resolve));
  await new Promise((resolve) => setTimeout(resolve, 100)); // the last changes' events
  for (const watcher of watchers) watcher.close();
  expect(status).toBe(0);
  // Each file replaced once, in place; no folder replaced.
  expect(Object.fromEntries(changes)).toEqual({
    'dist/workers/coordinator.js': 1,
    'dist/src/cli/main.js': 1,
  });

  expect(statSync(join(copy, 'dist/src/cli/main.js')).mode & 0o111).toBe(0o111);
  const cache = tempDir('skyq-npx-cache-');
  const run = npm(copy, [
    'exec',
    '--offline',
    '--cache',
    cache,
    '--foreground-scripts',
    '--',
    'skyq',
    '--help',
  ]);
  const out = run.stdout + run.stderr;
  expect(run.status, out).toBe(0);
  expect(run.stdout).toContain('Usage: skyq [options] [command]');
  // The build's own stamp is newer than every source: npm start would not build again.
  const prestart = npm(copy, ['run', 'prestart']);
  expect(prestart.stdout).toContain('skyq: dist/ is up to date');
  // A whole tsc build plus npx: 10-20 s on a quiet machine, past the suite's 60 s (and failed so)
  // at a load average of 22. The time proves nothing here; what the build leaves does.
}, 180_000);
