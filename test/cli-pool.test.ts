/**
 * `skyq start --pool n` runs the handler module on a piscina pool, from the compiled CLI (a
 * bundle, where piscina once found no `__dirname` to start its threads from and the launcher
 * died at start with a ReferenceError).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  CLI,
  finish,
  removeTempDirs,
  runCli,
  spawnNode,
  tempDir,
  untilStartReady,
  waitFor,
} from './helpers/runtime.js';

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

it('skyq start --pool 2 handles messages on the pool threads', async () => {
  const project = tempDir('skyq-pool-');
  // Each run says where it ran: an actor thread carries its settings in workerData, and skyq
  // gives piscina's threads none.
  writeFileSync(
    join(project, 'handler.mjs'),
    [
      "import { isMainThread, workerData } from 'node:worker_threads';",
      'export default async (job) => {',
      '  const pool = !isMainThread && workerData === undefined;',
      "  console.log('handled ' + job.body + (pool ? ' on the pool' : ' on an actor'));",
      '};',
      '',
    ].join('\n'),
  );
  const where = ['--redis', server.url, '--groups', '2'];
  const start = spawnNode(
    CLI,
    ['start', ...where, '--pool', '2', '--handler', './handler.mjs', '--log-dir', 'logs'],
    {},
    [],
    project,
  );
  try {
    await untilStartReady(start);
    const added = await runCli(['produce', ...where, '--delay', '0'], 'one\ntwo\nthree\n');
    expect([added.code, added.stderr]).toEqual([0, '']);
    await waitFor('the pool to handle three lines', () => {
      const handled = start.stdout().match(/^handled .*$/gm) ?? [];
      return handled.length === 3 ? handled.sort() : undefined;
    }).then((handled) =>
      expect(handled).toEqual([
        'handled one on the pool',
        'handled three on the pool',
        'handled two on the pool',
      ]),
    );
  } finally {
    start.child.kill('SIGINT');
    const ended = await finish(start, '', 30_000);
    expect(ended.stderr).not.toMatch(/Error/);
  }
});
