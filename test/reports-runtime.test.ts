// ctx.progress and ctx.log from handlers on real launchers, in the actor thread and on the
// piscina pool: what get(), events(), waitFor's onProgress, `skyq get --logs` and the job API
// show; many calls going in few script calls (one progress entry each); bad input failing the
// handler with one line; and the calls of a handler that outlived its time limit dropped.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDashboard } from '../src/http/index.js';
import { type Launcher, Queue, startActors } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, runCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** The progress events of one job: report.lua writes one entry per call that carries progress. */
async function progressEvents(queue: Queue, id: string): Promise<unknown[]> {
  const values: unknown[] = [];
  for await (const event of queue.events({ from: 'start', follow: false })) {
    if (event.type === 'progress' && event.id === id) values.push(event.progress);
  }
  return values;
}

describe.each([
  ['in the actor thread', 0],
  ['on the pool', 1],
])('ctx.progress and ctx.log %s', (_where, pool) => {
  const prefix = freshPrefix(pool ? 'rpool' : 'ractor');
  const where = () => ({ redis: redis.server.url, prefix, groups: 2 });
  let queue: Queue;
  let launcher: Launcher;
  let logDir: string;

  beforeAll(async () => {
    queue = new Queue({ ...where(), attempts: 1 });
    await queue.ready();
    logDir = tempDir();
    launcher = await startActors({
      ...where(),
      attempts: 1,
      logDir,
      handler: fixture('reports.mjs'),
      pool,
      timeoutMs: 3000,
      // One at a time: each ack goes out at once (a full actor claims again as a job ends), not
      // 200 ms later, so a report sent after the ack would be refused.
      concurrency: 1,
    });
  });
  afterAll(async () => {
    await launcher?.stop();
    await queue?.close();
  });

  it('show in get() and events(), the last progress stored before the ack', async () => {
    const ids = await queue.addBulk(Array.from({ length: 20 }, () => ({ body: { steps: 4 } })));
    for (const id of ids) {
      expect(await queue.waitFor(id, { timeoutMs: 20_000 })).toEqual({
        state: 'done',
        result: 'reported',
      });
      // The handler's last call came just before it returned: it is there all the same.
      expect(await queue.get(id)).toMatchObject({
        state: 'done',
        progress: { done: true },
        logs: ['step 1 of 4', 'step 2 of 4', 'step 3 of 4', 'step 4 of 4'],
        logCount: 4,
      });
    }
    const progress = new Map<string, unknown[]>();
    for await (const event of queue.events({ from: 'start', follow: false })) {
      if (event.type !== 'progress') continue;
      progress.set(event.id, [...(progress.get(event.id) ?? []), event.progress]);
    }
    // Calls within 50 ms go together, so a job's events may be fewer than its calls, but they
    // come in order and end with the last one.
    for (const id of ids) {
      const values = progress.get(id) ?? [];
      expect(values.at(-1)).toEqual({ done: true });
      const all = [25, 50, 75, 100, { done: true }];
      let at = 0;
      for (const value of values) {
        while (at < all.length && JSON.stringify(all[at]) !== JSON.stringify(value)) at++;
        expect(at, `${id}: ${JSON.stringify(values)} in order`).toBeLessThan(all.length);
      }
    }
  });

  it('tell waitFor’s onProgress while the job runs', async () => {
    const id = await queue.add({ steps: 4, gapMs: 150 }, { delay: 300 });
    const seen: unknown[] = [];
    const got = await queue.waitFor(id, {
      timeoutMs: 20_000,
      onProgress: (value) => seen.push(value),
    });
    expect(got).toEqual({ state: 'done', result: 'reported' });
    expect(seen.at(-1)).toEqual({ done: true });
    // 150 ms apart: each step is its own call (a busy machine may merge some).
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(
      seen.slice(0, -1).every((v, i, all) => i === 0 || (v as number) > (all[i - 1] as number)),
    ).toBe(true);
  });

  it('go to Redis in a few calls when called often', async () => {
    const id = await queue.add({ burst: 1000 });
    await queue.waitFor(id, { timeoutMs: 20_000 });
    const info = await queue.get(id);
    expect(info).toMatchObject({ progress: 100, logCount: 1000 });
    expect(info?.logs).toHaveLength(100);
    expect(info?.logs?.[0]).toBe('burst 901');
    expect(info?.logs?.[99]).toBe('burst 1000');
    // 2,001 calls in one go, each call with progress: one report call, two at most if a flush
    // fell between them (each report call writes one progress entry for the job).
    const calls = await progressEvents(queue, id);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(calls.at(-1)).toBe(100);
  });

  it('throw at the call on bad input: the handler fails with one line', async () => {
    const line = await queue.add({ bad: 'line' });
    const progress = await queue.add({ bad: 'progress' });
    await expect(queue.waitFor(line, { timeoutMs: 20_000 })).resolves.toEqual({
      state: 'dead',
      error: 'line: must be at most 1024 bytes (UTF-8), got 1025',
    });
    await expect(queue.waitFor(progress, { timeoutMs: 20_000 })).resolves.toEqual({
      state: 'dead',
      error: 'progress: a number must be from 0 to 100 (a percentage) (got 101)',
    });
  });

  it('are dropped once the time limit failed the job (one line, no call), or never made on the pool', async () => {
    const id = await queue.add({ outlive: true });
    const ended = await queue.waitFor(id, { timeoutMs: 20_000 });
    expect(ended).toEqual({ state: 'dead', error: 'handler timed out after 3000 ms' });
    const group = (await queue.get(id))?.group as number;
    if (pool) {
      // On the pool the task of a job past its time limit is cancelled, its thread ended: the
      // handler makes no late report to refuse.
      await waitFor('the cancel in the launcher log', () =>
        readFileSync(join(logDir, 'launcher.log'), 'utf8').includes('"event":"pool-cancel"')
          ? true
          : undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 1500)); // past its 4 s of sleep
    } else {
      // The actor ended the job: its calls are late, dropped before any call (late-reports.ts).
      const log = await waitFor('the late line in the actor log', () => {
        const text = readFileSync(join(logDir, `actor-${group}.log`), 'utf8');
        return text.includes(`"event":"report-late","job":"${id}"`) ? text : undefined;
      });
      expect(log).toMatch(new RegExp(`"level":40,.*"event":"report-late","job":"${id}",`));
      expect(log).not.toContain('report-refused');
    }
    expect(await queue.get(id)).toMatchObject({ state: 'dead', logs: ['before'], logCount: 1 });
    expect((await queue.get(id))?.progress).toBeUndefined();
  });
});

describe('skyq get --logs and the job API', () => {
  const prefix = freshPrefix('rview');
  const where = () => ({ redis: redis.server.url, prefix, groups: 2 });

  it('show a job’s progress and its lines', async () => {
    const queue = new Queue(where());
    const launcher = await startActors({
      ...where(),
      logDir: tempDir(),
      handler: fixture('reports.mjs'),
    });
    const http = await serveDashboard(where(), { listen: '127.0.0.1:0' });
    try {
      const id = await queue.add({ steps: 2 });
      await queue.waitFor(id, { timeoutMs: 20_000 });
      const flags = ['--redis', redis.server.url, '--prefix', prefix, '--groups', '2'];
      const plain = await runCli(['get', id, ...flags]);
      expect(plain.stdout).toMatch(/progress\s+\{"done":true\}/);
      expect(plain.stdout).toMatch(/logs\s+2 lines \(--logs prints them\)/);
      expect(plain.stdout).not.toContain('step 1 of 2');
      const withLogs = await runCli(['get', id, '--logs', ...flags]);
      expect(withLogs.stdout.trimEnd().split('\n').slice(-2)).toEqual([
        'step 1 of 2',
        'step 2 of 2',
      ]);
      const events = await runCli(['events', '--from', 'start', ...flags]);
      expect(events.stdout).toMatch(
        new RegExp(`g\\d  progress +${id}  progress \\{"done":true\\}`),
      );
      const json = JSON.parse((await runCli(['get', id, '--json', ...flags])).stdout);
      expect(json).toMatchObject({
        progress: { done: true },
        logs: ['step 1 of 2', 'step 2 of 2'],
      });

      const response = await fetch(new URL(`/api/jobs/${encodeURIComponent(id)}`, http.url));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        id,
        progress: { done: true },
        logs: ['step 1 of 2', 'step 2 of 2'],
        logCount: 2,
      });
    } finally {
      await http.close();
      await launcher.stop();
      await queue.close();
    }
  });
});
