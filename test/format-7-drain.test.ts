/**
 * Upgrades lose nothing: data the previous release (format 7) wrote, restored from its DUMP
 * output (test/fixtures/format-7/: write.mjs made data.json with that release's own build),
 * is read and drained by today's code. Pending, delayed, leased (its lease long run out), dead,
 * a schedule with its pending occurrence, done with a result, a dedupe window, items an
 * intake held when its launcher died, a generated id; each is where it was, each runs once.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { Queue, startActors } from '../src/index.js';
import { FORMAT_VERSION, formatKeys } from '../src/queue/format.js';
import { fixture, recorded, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
// The fixture's finished jobs finished when it was written: keep a history that old in view.
const KEEP_FOR_YEARS = { count: 1000, ageMs: 100 * 365 * 86_400_000 };
const options = () => ({
  redis: redis.server.url,
  prefix: 'old7',
  groups: 2,
  keepDone: KEEP_FOR_YEARS,
});

interface Fixture {
  format: number;
  keys: Record<string, { dump: string; pttl: number }>;
}

beforeAll(async () => {
  const data = JSON.parse(
    readFileSync(new URL('fixtures/format-7/data.json', import.meta.url), 'utf8'),
  ) as Fixture;
  expect(data.format).toBe(7);
  for (const [key, { dump, pttl }] of Object.entries(data.keys)) {
    await redis.client.restore(
      Buffer.from(key, 'hex'),
      Math.max(pttl, 0),
      Buffer.from(dump, 'hex'),
    );
  }
});

let queue: Queue;
beforeAll(() => {
  queue = new Queue(options());
});
afterAll(() => queue.close());

describe('data written by the previous release (format 7)', () => {
  it('reads as it was written', async () => {
    expect(await redis.client.get('old7:format')).toBe('7');
    expect(await queue.get('done-1')).toMatchObject({
      state: 'done',
      result: { handled: 'done-1' },
    });
    expect(await queue.get('dead-1')).toMatchObject({ state: 'dead', body: { kind: 'dead' } });
    expect(await queue.get('delayed-1')).toMatchObject({
      state: 'delayed',
      dueAt: Date.UTC(2100, 0, 1),
    });
    expect(await queue.schedules.get('hourly')).toMatchObject({ id: 'hourly', every: 3_600_000 });
    // Inside its window a finished caller id is not added again.
    const again = { id: 'dedupe-1', group: 1, dedupeMs: 60_000 };
    expect(await queue.add({ kind: 'again' }, again)).toBe('dedupe-1');
    expect(await queue.get('dedupe-1')).toMatchObject({ state: 'done' });
  });

  it('is drained by today’s launcher, each job once, and the format is raised', async () => {
    const launcher = await startActors({
      ...options(),
      logDir: tempDir(),
      handler: fixture('record.mjs'),
      intake: ['inbox'],
    });
    try {
      const schedule = await queue.schedules.get('hourly');
      const occurrence = `schedule:hourly:${schedule?.last ?? schedule?.next}`;
      const expected = [
        'pending-1',
        'pending-2',
        'leased-1',
        'in:old-launcher-1:0:a0',
        'in:old-launcher-1:0:a1',
        'in:old-launcher-1:0:a2',
      ];
      await waitFor(
        'the old jobs handled',
        async () => {
          const done = await recorded(redis.client, 'fixture:done');
          return expected.every((id) => done.includes(id)) || undefined;
        },
        20_000,
      );
      expect(await queue.deadLetters.retry({ group: 1 })).toBe(1);
      const fresh = await queue.add('after the upgrade', { group: 1 });
      await waitFor(
        'the retried and the new one',
        async () => {
          const done = await recorded(redis.client, 'fixture:done');
          return (done.includes('dead-1') && done.includes(fresh)) || undefined;
        },
        20_000,
      );
      const done = await recorded(redis.client, 'fixture:done');
      const runs = (id: string) => done.filter((d) => d === id).length;
      for (const id of [...expected, 'dead-1', fresh]) expect(runs(id), id).toBe(1);
      expect(done.filter((id) => id.startsWith('schedule:hourly:'))).toHaveLength(1);
      expect(occurrence).toMatch(/^schedule:hourly:\d+$/);
      // (The handler records a job before its ack: wait for the ack.)
      await waitFor(
        'leased-1 acked',
        async () => (await queue.get('leased-1'))?.state === 'done' || undefined,
      );
      expect(await queue.get('leased-1')).toMatchObject({ state: 'done', attempts: 2 });
      expect(await queue.get('delayed-1')).toMatchObject({ state: 'delayed' });
      // The intake's holding list is empty and gone from the registry.
      expect(await redis.client.llen('{inbox}:old7:intake:old-launcher-1')).toBe(0);
      // A generated id after the upgrade is none of the old ones.
      const oldIds = await redis.client.zrange(keyOf('old7', 1, 'delayed'), 0, -1);
      expect(oldIds).toContain(oldIds.find((id) => /^1:/.test(id)));
      expect(oldIds.filter((id) => id === fresh)).toHaveLength(0);
      for (const key of formatKeys('old7', 2).slice(0, 3))
        expect(await redis.client.get(key), key).toBe(String(FORMAT_VERSION));
    } finally {
      await launcher.stop();
    }
  });
});
