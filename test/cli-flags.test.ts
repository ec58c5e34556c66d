/**
 * Flags a newcomer meets first: `skyq --version`, a refused flag that says so in one line and
 * points at the command's help (not the whole help text), and values that must not pass:
 * `--concurrency 0`, an ACL user name the printed command cannot carry, `--quiet` that is quiet.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { ROOT, removeTempDirs, runCli } from './helpers/runtime.js';

let server: RedisServerHandle;
/** Nothing listens here: a command that got as far as connecting fails on it. */
const DEAD = 'redis://127.0.0.1:1';

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

it('skyq --version prints the package version', async () => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const run = await runCli(['--version']);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout.trim()).toBe(version);
});

it('a refused flag prints one line and where the help is, not the help', async () => {
  const cases: [string[], string, string][] = [
    [['stats', '--bogus'], "skyq: unknown option '--bogus'", 'see skyq stats --help'],
    [['dlq', 'list', '--nope'], "skyq: unknown option '--nope'", 'see skyq dlq list --help'],
    [
      ['stats', '--redis', DEAD, '--groups', 'x'],
      'skyq: groups: expected a whole number ≥ 0 (got "x")',
      'see skyq stats --help',
    ],
  ];
  for (const [args, error, hint] of cases) {
    const run = await runCli(args);
    expect(run.code, args.join(' ')).toBe(1);
    expect(lines(run.stderr), args.join(' ')).toEqual([error, hint]);
    expect(run.stdout).toBe('');
  }
});

it('--concurrency 0 is refused before anything connects or starts', async () => {
  for (const args of [
    ['start', '--redis', DEAD, '--concurrency', '0'],
    ['bench', '--redis', DEAD, '--concurrency', '0'],
    ['start', '--redis', DEAD, '--batch', '0'],
  ]) {
    const run = await runCli(args);
    expect(run.code, args.join(' ')).toBe(1);
    expect(lines(run.stderr)[0], args.join(' ')).toMatch(
      /^skyq: (concurrency|batch): must be at least 1/,
    );
  }
});

it('acl --user refuses a name the printed ACL SETUSER cannot carry', async () => {
  for (const user of ['bad user', 'quo"te', '']) {
    const run = await runCli(['acl', '--user', user]);
    expect(run.code, user).toBe(1);
    expect(lines(run.stderr)[0]).toMatch(/^skyq: user: expected letters, digits/);
    expect(run.stdout).toBe('');
  }
  const ok = await runCli(['acl', '--user', 'svc.skyq-1']);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toMatch(/^ACL SETUSER svc\.skyq-1 on /);
});

it('produce --count --quiet prints nothing', async () => {
  const loud = await runCli(['produce', '--redis', server.url, '--count', '3', '--at-once']);
  expect(loud.code, loud.stderr).toBe(0);
  expect(loud.stdout).toMatch(/^writing to redis:\S+\nadded 3 messages in /);
  const quiet = await runCli([
    'produce',
    '--redis',
    server.url,
    '--count',
    '3',
    '--at-once',
    '--quiet',
  ]);
  expect(quiet.code, quiet.stderr).toBe(0);
  expect(quiet.stdout).toBe('');
  expect(quiet.stderr).toBe('');
});
