/**
 * Redis shut down under a Queue (and a dashboard) that had reached it: every public read and
 * change the CLI and the dashboard's API make rejects with ERR_SKYQ_UNREACHABLE, one line with
 * the password masked. The clock read (TIME, not a script) answered ioredis's own "Stream isn't
 * writeable and enableOfflineQueue options is false", with no code, so `GET /api/jobs/x` and
 * `GET /api/schedules` said that where every other route named Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';

const PASSWORD = 'sekretPW99';

describe('calls after Redis went away', () => {
  let server: RedisServerHandle;
  let queue: Queue;
  let dashboard: HttpHandle;
  let where: string;
  const prefix = freshPrefix('gone');

  beforeAll(async () => {
    server = await startStandalone({ password: PASSWORD });
    where = server.url.replace(PASSWORD, '***');
    // Connected, its clock never read (ready() would read it, and a reading holds a minute).
    queue = new Queue({ redis: server.url, prefix, groups: 2 });
    await queue.counts();
    dashboard = await serveDashboard(
      { redis: server.url, prefix, groups: 2 },
      { listen: '127.0.0.1:0' },
    );
    // One route while Redis answers (not one that reads the clock), so its client had a
    // connection to lose.
    expect((await fetch(new URL('/api/list', dashboard.url))).status).toBe(200);
    await server.stop();
  }, 60_000);

  afterAll(async () => {
    await dashboard?.close();
    await queue?.close();
    await server?.stop();
  });

  const calls: [string, () => Promise<unknown>][] = [
    ['clock(0).now()', () => queue.clock(0).now()],
    ['clock(1).measure()', () => queue.clock(1).measure()],
    ['get', () => queue.get('x')],
    ['dedupeUntil', () => queue.dedupeUntil('x')],
    ['list', () => queue.list('done')],
    ['listCounts', () => queue.listCounts()],
    ['add', () => queue.add('body')],
    ['cancel', () => queue.cancel('x')],
    ['reschedule', () => queue.reschedule('x', { delay: 1000 })],
    ['pause', () => queue.pause(0)],
    ['flows.get', () => queue.flows.get('x')],
    ['schedules.list', () => queue.schedules.list()],
    ['schedules.get', () => queue.schedules.get('x')],
    ['schedules.preview', () => queue.schedules.preview({ every: '1m' })],
    ['schedules.upsert', () => queue.schedules.upsert('x', { every: '1m' })],
    ['rateLimits.list', () => queue.rateLimits.list()],
    ['deadLetters.page', () => queue.deadLetters.page()],
    ['deadLetters.retry', () => queue.deadLetters.retry()],
    ['waitFor', () => queue.waitFor('x', { timeoutMs: 2000 })],
    ['events', () => queue.events({ follow: false })[Symbol.asyncIterator]().next()],
    [
      'events from start',
      () => queue.events({ follow: false, from: 'start' })[Symbol.asyncIterator]().next(),
    ],
  ];

  it('every Queue call rejects with ERR_SKYQ_UNREACHABLE, the password masked', async () => {
    const seen: Record<string, unknown> = {};
    for (const [what, call] of calls) {
      seen[what] = await call().then(
        () => 'resolved',
        (error: { code?: string; message: string }) => `${error.code} ${error.message}`,
      );
    }
    const expected = `ERR_SKYQ_UNREACHABLE cannot reach Redis at ${where}: connection refused`;
    expect(seen).toEqual(Object.fromEntries(calls.map(([what]) => [what, expected])));
  }, 60_000);

  it('every API route answers "cannot reach Redis", the password masked', async () => {
    const seen: Record<string, unknown> = {};
    for (const path of ['/api/jobs/x', '/api/schedules', '/api/list', '/api/dead']) {
      const response = await fetch(new URL(path, dashboard.url));
      seen[path] = [response.status, await response.text()];
    }
    const body = JSON.stringify({ error: `cannot reach Redis at ${where}: connection refused` });
    expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((path) => [path, [500, body]])));
    expect(JSON.stringify(seen)).not.toContain(PASSWORD);
  }, 60_000);
});
