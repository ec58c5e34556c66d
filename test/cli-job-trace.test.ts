/**
 * A job that succeeds leaves a trace at debug: `skyq logs --job ID` shows its start and its
 * finish (skyq start --log-level debug).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { finish, removeTempDirs, runCli, spawnCli, tempDir, waitFor } from './helpers/runtime.js';

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

it('logs --job ID shows a successful job start and finish at debug', async () => {
  const logDir = tempDir('skyq-trace-');
  const where = ['--redis', server.url, '--prefix', 'tracedebug', '--groups', '1'];
  const start = spawnCli(['start', ...where, '--log-dir', logDir, '--log-level', 'debug']);
  let id = '';
  try {
    await waitFor('actors ready', () => (/actors? ready/.test(start.stdout()) ? true : undefined));
    const produced = await runCli(['produce', ...where, '--delay', '0'], 'hello\nquit\n');
    id = /added (\S+)/.exec(produced.stdout)?.[1] as string;
    expect(id, produced.stderr).toBeTruthy();
    await waitFor('the job to finish', async () => {
      const logs = await runCli(['logs', '--log-dir', logDir, '--job', id, '--level', 'debug']);
      return / done job=/.test(logs.stdout) ? logs.stdout : undefined;
    });
  } finally {
    start.child.kill('SIGINT');
    await finish(start, '', 30_000);
  }
  const logs = await runCli(['logs', '--log-dir', logDir, '--job', id, '--level', 'debug']);
  const lines = logs.stdout.split('\n').filter(Boolean);
  const started = lines.findIndex((line) => / DEBUG .* start job=/.test(line));
  const done = lines.findIndex((line) => / DEBUG .* done job=/.test(line));
  expect(started, logs.stdout).toBeGreaterThanOrEqual(0);
  expect(done, logs.stdout).toBeGreaterThan(started);
  expect(lines[started]).toContain(`job=${id}`);
  expect(lines[started]).toMatch(/attempt=1/);
  expect(lines[done]).toMatch(/ms=\d+/);
});
