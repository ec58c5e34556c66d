/**
 * A Redis password never appears in anything skyq prints or logs: a password-protected
 * redis-server, the compiled CLI run the ways a user runs it (URL in --redis and in
 * REDIS_URL, good and bad URLs, an unreachable one, a wrong password, a bench), and a grep of
 * every stdout, stderr and log file those runs wrote.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { redactText, redactUrl } from '../src/base/redact.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  type CliResult,
  finish,
  removeTempDirs,
  spawnCli,
  tempDir,
  waitFor,
} from './helpers/runtime.js';

const password = `pw-${randomBytes(12).toString('hex')}`;
let server: RedisServerHandle;

beforeAll(async () => {
  server = await startStandalone({ password });
});
afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

it('redactUrl masks the password of any URL shape, and nothing else', () => {
  expect(redactUrl('redis://user:secret@host:6379/2')).toBe('redis://user:***@host:6379/2');
  expect(redactUrl('rediss://:secret@host')).toBe('rediss://:***@host');
  expect(redactUrl('redis://secret@host')).toBe('redis://:***@host');
  expect(redactUrl('redis://u:p@ss/w@rd@host:1')).toBe('redis://u:***@host:1');
  expect(redactUrl('http://u:secret@host')).toBe('http://u:***@host');
  expect(redactUrl(':secret@host:6379')).toBe(':***@host:6379');
  expect(redactUrl('redis://host:6379?password=secret&db=1')).toBe(
    'redis://host:6379?password=***&db=1',
  );
  expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  expect(redactText('at redis://a:secret@h:1 and rediss://b:other@k: refused')).toBe(
    'at redis://a:***@h:1 and rediss://b:***@k: refused',
  );
  expect(redactText('id order@123 stays')).toBe('id order@123 stays');
});

it('no output or log file of any command shows the password', async () => {
  const url = server.url;
  expect(url).toContain(password);
  const logDir = tempDir('skyq-cred-logs-');
  const benchTmp = tempDir('skyq-cred-tmp-');
  const results: [string, CliResult][] = [];
  const run = async (name: string, args: string[], env = {}, input = '', timeoutMs = 30_000) => {
    const result = await finish(spawnCli(args, env), input, timeoutMs);
    results.push([name, result]);
    return result;
  };

  // start: the banner names the server; SIGINT drains and stops.
  const start = spawnCli(['start', '--log-dir', logDir, '--groups', '2'], { REDIS_URL: url });
  onTestFinished(() => void start.child.kill('SIGKILL'));
  await waitFor(
    'skyq start to be ready',
    () =>
      /actors? ready/.test(start.stdout()) || start.child.exitCode !== null ? true : undefined,
    30_000,
  );
  expect(start.stdout()).toContain(`on redis://:***@127.0.0.1:${server.port}`);
  const produced = await run(
    'produce',
    ['produce', '--groups', '2', '--delay', '0s'],
    { REDIS_URL: url },
    'hello\nquit\n',
  );
  expect(produced.code).toBe(0);
  start.child.kill('SIGINT');
  results.push(['start', await finish(start, '', 30_000)]);

  const redis = ['--redis', url];
  expect((await run('stats', ['stats', ...redis])).code).toBe(0);
  expect((await run('dlq list', ['dlq', 'list'], { REDIS_URL: url })).code).toBe(0);
  expect((await run('cancel', ['cancel', 'nope', ...redis])).code).toBe(1);

  const wrongScheme = await run('bad scheme', ['stats', '--redis', `http://me:${password}@host:1`]);
  expect(wrongScheme.stderr).toMatch(/redis: must be a redis:\/\/ or rediss:\/\/ URL/);
  const noHost = await run('no host', ['start', '--redis', `redis://:${password}@`]);
  expect(noHost.code).not.toBe(0);
  const dead = await run('unreachable', ['produce', '--redis', `redis://:${password}@127.0.0.1:1`]);
  expect(dead.stderr.trim()).toBe(
    'skyq: cannot reach Redis at redis://:***@127.0.0.1:1: connection refused',
  );
  const wrong = await run('wrong password', [
    'stats',
    '--redis',
    `redis://:${password}x@127.0.0.1:${server.port}`,
  ]);
  expect(wrong.code).not.toBe(0);
  expect(wrong.stderr).toMatch(/wrong user name or password/);

  const bench = await run(
    'bench',
    ['bench', '--workload', 'burst', '--count', '200', '--actors', '2', ...redis],
    { TMPDIR: benchTmp },
    '',
    90_000,
  );
  expect(bench.code, bench.stderr).toBe(0);
  expect(bench.stdout).toContain(`on redis://:***@127.0.0.1:${server.port}`);

  // Every output and every log file the runs wrote.
  const texts: [string, string][] = results.flatMap(([name, r]) => [
    [`${name} stdout`, r.stdout],
    [`${name} stderr`, r.stderr],
  ]);
  const logs = [...filesUnder(logDir), ...filesUnder(benchTmp)];
  expect(logs.some((file) => file.endsWith('actor-0.log'))).toBe(true);
  for (const file of logs) texts.push([file, readFileSync(file, 'utf8')]);
  const leaks = texts.filter(([, text]) => text.includes(password)).map(([where]) => where);
  expect(leaks).toEqual([]);
  // Every command said something, one line for each failure (a refused flag value adds where
  // its help is: `see skyq <cmd> --help`).
  for (const [name, r] of results) {
    expect(`${r.stdout}${r.stderr}`.length, name).toBeGreaterThan(0);
    if (r.code !== 0 && name !== 'cancel') {
      const [line, ...rest] = r.stderr.trim().split('\n');
      expect(line, name).toMatch(/^skyq: /);
      expect(rest.join('\n'), name).toMatch(/^(see skyq [a-z ]+ --help)?$/);
    }
  }
});
