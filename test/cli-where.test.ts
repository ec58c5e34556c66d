/**
 * The CLI says where it is: which Redis a read command read (redacted, on the first line),
 * whether `skyq start` uses an existing Redis or started its own, and which directory it looked
 * in when a command fails because of the current directory (./.skyq's password, ./logs).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  CLI,
  type CliChild,
  finish,
  removeTempDirs,
  runCli,
  spawnNode,
  tempDir,
  untilStartReady,
} from './helpers/runtime.js';

let open: RedisServerHandle;
let locked: RedisServerHandle;
const PASSWORD = 'where-test-password';

beforeAll(async () => {
  [open, locked] = await Promise.all([startStandalone(), startStandalone({ password: PASSWORD })]);
});

afterAll(async () => {
  await Promise.all([open?.stop(), locked?.stop()]);
  removeTempDirs();
});

/** The CLI run from `cwd` with nothing named: no REDIS_URL, the embedded port set. */
function cliIn(cwd: string, port: number, args: string[]): CliChild {
  return spawnNode(CLI, args, { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) }, [], cwd);
}

it('stats, dlq list and schedules list print the Redis they read first, password masked', async () => {
  const url = locked.url;
  const shown = `reading redis://:***@127.0.0.1:${locked.port}`;
  const stats = await runCli(['stats', '--redis', url]);
  expect(stats.code, stats.stderr).toBe(0);
  expect(stats.stdout.split('\n')[0]).toBe(shown);
  const dlq = await runCli(['dlq', 'list', '--redis', url]);
  expect(dlq.code, dlq.stderr).toBe(0);
  expect(dlq.stdout.split('\n')[0]).toBe(shown);
  const schedules = await runCli(['schedules', 'list', '--redis', url]);
  expect(schedules.code, schedules.stderr).toBe(0);
  expect(schedules.stdout.split('\n')[0]).toBe(shown);
  for (const out of [stats.stdout, dlq.stdout, schedules.stdout])
    expect(out).not.toContain(PASSWORD);
});

it('every command that writes prints the Redis it wrote to first, password masked', async () => {
  const url = locked.url;
  const shown = `writing to redis://:***@127.0.0.1:${locked.port}`;
  const where = ['--redis', url, '--prefix', 'writes', '--groups', '2'];
  const produced = await runCli(['produce', ...where, '--delay', '1h'], 'a\nb\nquit\n');
  const [first, second] = /added (\S+)\nadded (\S+)/.exec(produced.stdout)?.slice(1) ?? [];
  expect(first, produced.stdout + produced.stderr).toBeDefined();
  const runs = {
    produce: produced,
    reschedule: await runCli(['reschedule', first as string, '--delay', '2h', ...where]),
    cancel: await runCli(['cancel', second as string, ...where]),
    pause: await runCli(['pause', ...where]),
    resume: await runCli(['resume', ...where]),
    upsert: await runCli(['schedules', 'upsert', 'w', '--every', '1h', ...where]),
    remove: await runCli(['schedules', 'remove', 'w', ...where]),
    retry: await runCli(['dlq', 'retry', ...where]),
    purge: await runCli(['dlq', 'purge', '--group', '0', ...where]),
  };
  for (const [command, run] of Object.entries(runs)) {
    expect([command, run.code, run.stderr]).toEqual([command, 0, '']);
    expect([command, run.stdout.split('\n')[0]]).toEqual([command, shown]);
    expect(run.stdout).not.toContain(PASSWORD);
  }
  // --quiet prints nothing but errors.
  const quiet = await runCli(['produce', ...where, '--quiet'], 'c\nquit\n');
  expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, '', '']);
});

it('skyq start says plainly that it uses an existing Redis it did not start', async () => {
  const cwd = tempDir('skyq-where-');
  const run = cliIn(cwd, open.port, ['start', '--groups', '1', '--log-dir', 'logs']);
  try {
    await untilStartReady(run);
    expect(run.stdout()).toContain(
      `skyq: using the existing Redis at redis://127.0.0.1:${open.port} (it answered without a password; skyq did not start it)`,
    );
  } finally {
    run.child.kill('SIGINT');
    await finish(run, '', 30_000);
  }
});

it('a refused login with nothing named names the directory it looked in', async () => {
  const cwd = tempDir('skyq-where-');
  const run = await finish(cliIn(cwd, locked.port, ['stats']));
  expect(run.code).toBe(1);
  const [first, ...rest] = run.stderr.split('\n').filter(Boolean);
  expect(rest).toEqual([]);
  expect(first).toMatch(/refused the login/);
  expect(first).toContain(`password was looked for in ${cwd}/.skyq/${locked.port}/`);
});

it('logs with no log directory names the absolute directory', async () => {
  const cwd = tempDir('skyq-where-');
  const run = await finish(cliIn(cwd, open.port, ['logs']));
  expect(run.code).toBe(1);
  expect(run.stderr.split('\n')[0]).toBe(`skyq: log-dir: no log directory ${cwd}/logs`);
});
