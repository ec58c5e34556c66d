// ctx.progress and ctx.log called after the handler returned (a timer it left behind): dropped
// where they are made, the same in the actor thread and on the pool. No Redis call carries them,
// the actor's log says so once for the job (not once per call, and no report-refused), and a
// pool thread keeps nothing for the job once its task answered (no entry per late call).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Launcher, Queue, startActors } from '../src/index.js';
import type { Message } from '../src/queue/message.js';
import { type PoolReport, poolReporter } from '../src/runtime/pool-reports.js';
import runJobs from '../workers/handler-task.js';
import { monitor } from './helpers/monitor.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['in the actor thread', 0],
  ['on the pool', 1],
])('ctx.progress and ctx.log after the handler returned, %s', (_where, pool) => {
  const prefix = freshPrefix(pool ? 'lpool' : 'lactor');
  const where = () => ({ redis: redis.server.url, prefix, groups: 1 });
  let queue: Queue;
  let launcher: Launcher;
  let logDir: string;

  beforeAll(async () => {
    queue = new Queue(where());
    await queue.ready();
    logDir = tempDir();
    launcher = await startActors({
      ...where(),
      logDir,
      handler: fixture('late-reports.mjs'),
      pool,
    });
  });
  afterAll(async () => {
    await launcher?.stop();
    await queue?.close();
  });

  it('are dropped with one line for the job, and no Redis call', async () => {
    const carried: string[] = [];
    const watch = monitor(redis.server.url, (line) => {
      if (line.includes('"late ')) carried.push(line);
    });
    try {
      // Added together, claimed together, run together: on the pool, in one task, which the
      // slow job keeps running past the other's late calls.
      const [id, slow] = await queue.addBulk([{ body: {} }, { body: { slowMs: 1500 } }]);
      expect(await queue.waitFor(id, { timeoutMs: 20_000 })).toEqual({
        state: 'done',
        result: 'returned',
      });
      await queue.waitFor(slow, { timeoutMs: 20_000 });
      const logFile = join(logDir, 'actor-0.log');
      // The slow job ran past the late calls (200–450 ms after the other returned).
      expect(carried, 'Redis calls carrying a late line').toEqual([]);
      await waitFor('the late line in the actor log', () =>
        readFileSync(logFile, 'utf8').includes('"event":"report-late"') ? true : undefined,
      );
      const log = readFileSync(logFile, 'utf8');
      const lines = log.split('\n');
      const late = lines.filter((line) => line.includes('"event":"report-late"'));
      expect(late).toHaveLength(1);
      expect(late[0]).toContain(`"job":"${id}"`);
      expect(late[0]).toContain('already returned');
      expect(lines.filter((line) => line.includes('report-refused'))).toEqual([]);
      expect(await queue.get(id)).toMatchObject({ logs: ['in time'], logCount: 1 });
      expect((await queue.get(id))?.progress).toBeUndefined();
    } finally {
      watch.stop();
    }
  });
});

describe('a pool thread', () => {
  it('keeps nothing for a job whose task answered, and posts its late calls as one notice', async () => {
    const reportTo = `skyq-reports-late-test-${process.pid}`;
    const posted: PoolReport[] = [];
    const channel = new BroadcastChannel(reportTo);
    channel.onmessage = (event) => posted.push(...(event as { data: PoolReport[] }).data);
    try {
      const job = { id: 'late-1', group: 0, body: {} } as unknown as Message;
      const reply = await runJobs({
        handler: pathToFileURL(fixture('late-reports.mjs')).href,
        jobs: [[job, 0, 7]],
        reportTo,
      });
      expect(reply).toEqual({ outcomes: [{ result: 'returned' }], reported: [1] });
      await sleep(700); // past the last late call
      expect(poolReporter(reportTo).size, 'jobs the reporter still holds').toBe(0);
      // 'in time', then one notice naming the job: none of the ten late calls travels.
      expect(posted).toEqual([
        [7, 1, 'in time'],
        [7, 3, 'late-1'],
      ]);
    } finally {
      channel.close();
    }
  });
});
