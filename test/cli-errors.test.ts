/**
 * Commands that cannot do their work fail alike: one line saying why, exit 1, soon; never a
 * stack trace, never a password. `stats --watch` against a Redis that never answered,
 * `dashboard` with Redis down, `bench` pointed off loopback.
 */
import { afterAll, expect, it } from 'vitest';
import { removeTempDirs, runCli } from './helpers/runtime.js';

const DEAD = 'redis://127.0.0.1:1';
const UNREACHABLE = `skyq: cannot reach Redis at ${DEAD}: connection refused`;
const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

afterAll(removeTempDirs);

it('stats --watch against a dead Redis fails in one line within 5 s', async () => {
  const started = Date.now();
  const run = await runCli(['stats', '--redis', DEAD, '--watch', '200ms'], '', 15_000);
  expect(run.signal, 'killed: it never exited').toBeNull();
  expect(run.code).toBe(1);
  expect(Date.now() - started).toBeLessThan(5000);
  expect(lines(run.stderr)).toEqual([UNREACHABLE]);
});

it('dashboard with Redis down says so like every other command', async () => {
  const run = await runCli(['dashboard', '--redis', DEAD, '--http', '127.0.0.1:0'], '', 15_000);
  expect(run.code).toBe(1);
  expect(lines(run.stderr)).toEqual([UNREACHABLE]);
  const stats = await runCli(['stats', '--redis', DEAD]);
  expect(lines(stats.stderr)).toEqual([UNREACHABLE]);
});

it('bench against a Redis that does not answer is one line, like every other command', async () => {
  // The bench runs from dist/bench/, beside the CLI's bundle: its errors are another copy's.
  const run = await runCli(['bench', '--redis', DEAD, '--count', '10'], '', 30_000);
  expect(run.code).toBe(1);
  expect(lines(run.stderr)).toEqual([UNREACHABLE]);
  expect(run.stdout).toBe('');
});

it('bench --redis off loopback is one line naming the flag, password masked', async () => {
  const run = await runCli(['bench', '--redis', 'redis://u:sekret-pw@10.1.2.3:6379']);
  expect(run.code).toBe(1);
  const [first, ...rest] = lines(run.stderr);
  expect(first).toBe(
    'skyq: redis: benchmarks only run against a loopback redis-server (127.x.x.x, localhost or ::1) (got "redis://u:***@10.1.2.3:6379")',
  );
  expect(rest).toEqual(['see skyq bench --help']);
  expect(run.stderr).not.toContain('sekret-pw');
  expect(run.stderr).not.toMatch(/\n\s+at /);
});
