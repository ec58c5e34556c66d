// The dashboard's JSON API on its own (`skyq dashboard`): overview of depths and of every
// launcher publishing to Redis, dead letters by page, job lookup, and the actions.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { groupKeys, Queue, startActors } from '../src/index.js';
import { postJson } from './helpers/http.js';
import { claimAtLeast, freshPrefix } from './helpers/queue.js';
import { tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

interface Letter {
  id: string;
  group: number;
  reason: string;
  lastError: string | null;
  attempts: number;
  body: { text: string; truncated: boolean };
}

describe('dashboard API', () => {
  // Each test gets a prefix, a queue and a dashboard of its own: none needs another's leftovers.
  let prefix: string;
  let handle: HttpHandle;
  let queue: Queue;
  const get = async (path: string) => {
    const response = await fetch(new URL(path, handle.url));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const post = async (path: string, body: unknown) => {
    const response = await postJson(handle.url, path, body);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  /** 25 dead letters in group 0, the first with a hostile body and error. */
  const deadLetters = async () => {
    await queue.add({ html: HOSTILE }, { group: 0, attempts: 1 });
    await queue.addBulk(
      Array.from({ length: 24 }, (_, i) => ({
        body: `letter ${i}`,
        options: { group: 0, attempts: 1 },
      })),
    );
    for (const message of await claimAtLeast(queue, 0, 25)) {
      await queue.fail(message, new Error(HOSTILE));
    }
  };

  beforeEach(async () => {
    prefix = freshPrefix('api');
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await queue.ready();
    handle = await serveDashboard(
      { redis: redis.server.url, prefix, groups: 2 },
      {
        listen: '127.0.0.1:0',
      },
    );
  });
  afterEach(async () => {
    await handle?.close();
    await queue?.close();
  });

  it('pages dead letters with reason, attempts and a body preview kept as text', async () => {
    await deadLetters();
    const first = await get('/api/dead?limit=20&order=oldest');
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(25);
    const letters = first.body.letters as Letter[];
    expect(letters).toHaveLength(20);
    expect(letters[0]?.body.text).toBe(JSON.stringify({ html: HOSTILE }));
    expect(letters[0]).toMatchObject({ group: 0, attempts: 1, lastError: HOSTILE });
    expect(letters[0]?.reason).toBeTruthy();
    expect(first.body.next).toEqual(expect.any(String));
    const second = await get(`/api/dead?limit=20&cursor=${first.body.next}`);
    expect(second.body.letters as Letter[]).toHaveLength(5);
    expect(second.body.next).toBeNull();
    expect((await get('/api/dead?offset=20')).status).toBe(400);
    expect((await get('/api/dead?cursor=bogus')).status).toBe(400);
    const ids = new Set([...letters, ...(second.body.letters as Letter[])].map((l) => l.id));
    expect(ids.size).toBe(25);
    expect((await get('/api/dead?group=1')).body.total).toBe(0);
    expect((await get('/api/dead?offset=-1')).status).toBe(400);
  });

  it('retries selected dead letters, and wants ids or all', async () => {
    await deadLetters();
    const letters = (await get('/api/dead?limit=2')).body.letters as Letter[];
    const ids = letters.map((l) => l.id);
    const refused = await post('/api/dead/retry', {});
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('ids: give a non-empty list of ids, or all: true');
    const retried = await post('/api/dead/retry', { ids });
    expect(retried).toEqual({ status: 200, body: { count: 2 } });
    for (const id of ids) expect((await queue.get(id))?.state).toBe('ready');
    // The answer comes after a fresh reading: the overview shows it at once.
    const overview = (await get('/api/overview')).body;
    expect((overview.depths as { dead: number }[])[0]?.dead).toBe(23);
  });

  it('purges all dead letters of a group', async () => {
    await deadLetters();
    expect(await post('/api/dead/purge', { all: true, group: 1 })).toEqual({
      status: 200,
      body: { count: 0 },
    });
    expect(await post('/api/dead/purge', { all: true, group: 0 })).toEqual({
      status: 200,
      body: { count: 25 },
    });
    expect((await get('/api/dead')).body.total).toBe(0);
  });

  it('shows a binary raw member as bytes and retries it by its bytes', async () => {
    const raw = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    const [delayed] = groupKeys(prefix, 1) as [string];
    await redis.client.zadd(delayed, 1, raw);
    const strict = new Queue({ redis: redis.server.url, prefix, groups: 2, attempts: 1 });
    try {
      for (const message of await claimAtLeast(strict, 1, 1)) await strict.fail(message, 'no');
    } finally {
      await strict.close();
    }
    const [letter] = (await get('/api/dead?group=1')).body.letters as (Letter & {
      idBase64?: string;
    })[];
    expect(letter?.idBase64).toBe(raw.toString('base64'));
    expect(letter?.body.text).toBe('binary, 4 bytes: ff fe 00 41');
    const retried = await post('/api/dead/retry', { ids: [{ base64: letter?.idBase64 }] });
    expect(retried.body).toEqual({ count: 1 });
    expect((await post('/api/dead/retry', { ids: [7] })).body.error).toBe(
      'ids[0]: must be a string or { base64 } (got 7)',
    );
  });

  it('looks a job up, reschedules and cancels it', async () => {
    const id = await queue.add({ say: HOSTILE }, { group: 1, delay: 3_600_000, priority: 3 });
    const found = await get(`/api/jobs/${encodeURIComponent(id)}`);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({
      id,
      group: 1,
      state: 'delayed',
      priority: 3,
      body: { kind: 'json', text: JSON.stringify({ say: HOSTILE }, null, 2), truncated: false },
    });
    const dueBefore = found.body.dueAt as number;
    const moved = await post(`/api/jobs/${encodeURIComponent(id)}/reschedule`, {
      delayMs: 7_200_000,
    });
    expect(moved.body).toEqual({ rescheduled: true });
    const dueAfter = (await get(`/api/jobs/${encodeURIComponent(id)}`)).body.dueAt as number;
    expect(dueAfter - dueBefore).toBeGreaterThan(3_500_000);
    const runAt = Date.now() + 600_000;
    expect((await post(`/api/jobs/${id}/reschedule`, { runAt })).body).toEqual({
      rescheduled: true,
    });
    expect((await post(`/api/jobs/${id}/reschedule`, {})).status).toBe(400);
    expect((await post(`/api/jobs/${id}/reschedule`, { delayMs: -5 })).body.error).toBe(
      'delayMs: must be ≥ 0 (got -5)',
    );
    // A schedule's pending occurrence runs sooner, never later (the schedule would wait for it).
    const made = await queue.schedules.upsert('api-rsc', { every: '1h', startAt: runAt });
    const occ = encodeURIComponent(`schedule:api-rsc:${made.next}`);
    const later = await post(`/api/jobs/${occ}/reschedule`, { delayMs: 3_600_000 });
    expect(later.status).toBe(400);
    expect(later.body.error).toMatch(
      /^id: is schedule api-rsc's next occurrence, which can run sooner/,
    );
    expect((await post(`/api/jobs/${occ}/reschedule`, { delayMs: 0 })).body).toEqual({
      rescheduled: true,
    });
    await queue.schedules.remove('api-rsc');
    expect((await post(`/api/jobs/${id}/cancel`, {})).body).toEqual({ cancelled: true });
    expect((await get(`/api/jobs/${id}`)).status).toBe(404);
    expect((await post(`/api/jobs/${id}/cancel`, {})).body).toEqual({ cancelled: false });
  });

  it("a flow parent's job says when its tree was cut to the first jobs", async () => {
    const small = await queue.flows.add({ body: 'p', children: [{ body: 'a' }, { body: 'b' }] });
    const shown = await get(`/api/jobs/${encodeURIComponent(small.id)}`);
    expect(shown.body).toMatchObject({ flowCut: false });
    expect((shown.body.flow as unknown[]).length).toBe(2);
    const children = Array.from({ length: 600 }, (_, i) => ({
      body: i,
      options: { delay: 60_000 },
    }));
    const big = await queue.flows.add({ body: 'p', children });
    const cut = await get(`/api/jobs/${encodeURIComponent(big.id)}`);
    expect(cut.body).toMatchObject({ flowCut: true, children: { total: 600 } });
    expect((cut.body.flow as unknown[]).length).toBeLessThan(600);
  });

  it('pauses and resumes a group', async () => {
    expect((await post('/api/groups/pause', { group: 1 })).body).toEqual({ changed: [1] });
    expect((await queue.counts()).map((c) => c.paused)).toEqual([false, true]);
    expect((await post('/api/groups/pause', { group: 7 })).status).toBe(400);
    expect((await post('/api/groups/resume', {})).body).toEqual({ changed: [1] });
    expect((await queue.counts()).map((c) => c.paused)).toEqual([false, false]);
  });

  it('shows the actors of every launcher publishing to Redis, and samples since a time', async () => {
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      logDir: tempDir(),
    });
    try {
      const overview = await waitFor('the launcher in the overview', async () => {
        const { body } = await get('/api/overview');
        // A launcher may publish once before its actors are up: wait for both running.
        const actors = body.actors as { status: string }[];
        return actors.length === 2 && actors.every((a) => a.status === 'ok') ? body : undefined;
      });
      expect(overview.mode).toBe('redis');
      expect(overview.launchers).toEqual([
        expect.objectContaining({ id: launcher.id, pid: process.pid }),
      ]);
      expect(overview.actors).toEqual([
        expect.objectContaining({ launcher: launcher.id, group: 0, status: 'ok' }),
        expect.objectContaining({ launcher: launcher.id, group: 1, status: 'ok' }),
      ]);
      const samples = overview.samples as { at: number }[];
      expect(samples.length).toBeGreaterThan(0);
      const last = samples.at(-1)?.at as number;
      const later = (await get(`/api/overview?since=${last}`)).body.samples as { at: number }[];
      expect(later.every((s) => s.at > last)).toBe(true);
    } finally {
      await launcher.stop(0);
    }
  });

  it('serves /metrics of its own (test/dashboard-metrics.test.ts reads it through)', async () => {
    const response = await fetch(new URL('/metrics', handle.url));
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/^skyq_group_up\{group="0"\} 1$/m);
  });
});
