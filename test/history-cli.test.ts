// The CLI's side of history: `skyq get` prints a kept job's finish, duration and result, and
// `skyq start --keep-done` refuses a bad value in one line before starting anything.
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { fixture, runCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('skyq and history', () => {
  it('get prints state done, when it finished, how long it ran and its result', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'hcli', groups: 1 });
    try {
      const id = await queue.add({ order: 7 }, { id: 'order:7' });
      const [m] = await queue.claim(0, 1);
      if (!m) throw new Error('nothing claimed');
      m.result = { refunded: true };
      m.durationMs = 42;
      await queue.ack([m]);
      const out = await runCli([
        'get',
        id,
        '--redis',
        redis.server.url,
        '--prefix',
        'hcli',
        '--groups',
        '1',
      ]);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/state\s+done/);
      expect(out.stdout).toMatch(/duration\s+42 ms/);
      expect(out.stdout).toMatch(/result\s+\{"refunded":true\}/);
      expect(out.stdout).toMatch(/finished\s+\S/);
    } finally {
      await queue.close();
    }
  });

  it('get, list and counts show a job the consumers keep for a day, two hours after it finished', async () => {
    // The consumers keep a day; the readers (the CLI's, and a Queue made without keepDone)
    // are not told so. The old code hid the job from them past their own default of an hour.
    const where = { redis: redis.server.url, prefix: 'hday', groups: 1 };
    const consumer = new Queue({ ...where, keepDone: { count: 1000, ageMs: 86_400_000 } });
    const reader = new Queue(where);
    const told = new Queue({ ...where, keepDone: { ageMs: 3_600_000 } });
    try {
      const id = await consumer.add('nightly report', { id: 'report:1' });
      const [m] = await consumer.claim(0, 1);
      if (!m) throw new Error('nothing claimed');
      await consumer.ack([m]);
      // Two hours ago, as the history's clock goes (Redis's ms).
      const [seconds] = await redis.client.time();
      await redis.client.zadd('{hday:0}:done', 'XX', Number(seconds) * 1000 - 7_200_000, id);
      expect((await reader.get(id))?.state).toBe('done');
      expect((await reader.list('done')).items.map((item) => item.id)).toEqual([id]);
      expect((await reader.listCounts()).done).toBe(1);
      // A reader told an age of an hour leaves it out, as the consumers' next trim would.
      expect(await told.get(id)).toBeNull();
      const flags = ['--redis', redis.server.url, '--prefix', 'hday', '--groups', '1'];
      const got = await runCli(['get', id, ...flags]);
      expect(got.code).toBe(0);
      expect(got.stdout).toMatch(/state\s+done/);
      const listed = await runCli(['list', 'done', ...flags]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(id);
    } finally {
      await Promise.all([consumer.close(), reader.close(), told.close()]);
    }
  });

  it("a launcher's dashboard hides a done job past its consumers' age, given or by default", async () => {
    const where = { redis: redis.server.url, prefix: 'hdash', groups: 1 };
    const queue = new Queue(where);
    const http = { listen: '127.0.0.1:0' };
    const handler = fixture('record.mjs');
    const launchers = await Promise.all([
      startActors({ ...where, handler, logDir: tempDir(), http }),
      startActors({ ...where, handler, logDir: tempDir(), http, keepDone: { ageMs: 86_400_000 } }),
    ]);
    try {
      const id = await queue.add({ list: 'hdash' }, { id: 'report:2' });
      await waitFor('done', async () =>
        (await queue.get(id))?.state === 'done' ? true : undefined,
      );
      const [seconds] = await redis.client.time();
      await redis.client.zadd('{hdash:0}:done', 'XX', Number(seconds) * 1000 - 7_200_000, id);
      const states = await Promise.all(
        launchers.map(async (l) => (await fetch(new URL(`/api/jobs/${id}`, l.http?.url))).status),
      );
      // The default keeps an hour: its next trim takes the job. The other keeps a day.
      expect(states).toEqual([404, 200]);
    } finally {
      await Promise.all(launchers.map((l) => l.stop()));
      await queue.close();
    }
  });

  it('start --keep-done refuses a bad value in one line', async () => {
    const out = await runCli(['start', '--keep-done', 'lots', '--redis', redis.server.url]);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')[0]).toBe(
      'skyq: keep-done: must be <count>[,<age>], like 1000,1h (got "lots")',
    );
  });
});
