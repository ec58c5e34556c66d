// queue.events(): every event type, a reader restarted from its cursor (no gap, no repeat),
// the bounded stream, events off (done, dead and cancelled only), bad input, a 3-master cluster and a
// Redis restart while following. Real redis-server processes.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Message, Queue, type QueueEvent } from '../src/index.js';
import { claimAtLeast, freshPrefix, openQueue, useQueueRedis, waitFor } from './helpers/queue.js';
import {
  expectServedBy,
  heldPort,
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from './helpers/redis.js';
import { removeTempDirs, tempDir } from './helpers/runtime.js';

const redis = useQueueRedis();

/** Everything a reader gets until caught up (follow: false), or the first `limit`. */
async function collect(
  q: Queue,
  options: Parameters<Queue['events']>[0] = {},
  limit = Number.POSITIVE_INFINITY,
): Promise<QueueEvent[]> {
  const out: QueueEvent[] = [];
  if (out.length >= limit) return out;
  for await (const event of q.events({ follow: false, from: 'start', ...options })) {
    out.push(event);
    if (out.length >= limit) break;
  }
  return out;
}

/** Reads in the background until stopped; the events so far are in `seen`. */
function follow(q: Queue, options: Parameters<Queue['events']>[0] = {}) {
  const seen: QueueEvent[] = [];
  const abort = new AbortController();
  const done = (async () => {
    for await (const event of q.events({ ...options, follow: true, signal: abort.signal })) {
      seen.push(event);
    }
  })();
  return {
    seen,
    async stop() {
      abort.abort();
      await done; // the signal ends a reader blocked in XREAD at once
    },
  };
}

const key = (e: QueueEvent) => `${e.type} ${e.id}`;

describe('events', () => {
  it('tells each type: added, started, done, failed, dead, cancelled, rescheduled, stale', async () => {
    const q = await redis.queue({
      events: true,
      attempts: 3,
      backoff: { type: 'fixed', delay: 0 },
    });
    const ok = await q.add({ n: 1 }, { group: 0, name: 'email.send' });
    const bad = await q.add('bad', { group: 0 });
    const later = await q.add('later', { group: 0, delay: 60_000, name: 'later.job' });
    const gone = await q.add('gone', { group: 0, delay: 60_000 });
    const both = await claimAtLeast(q, 0, 2);
    const good = both.find((m) => m.id === ok) as Message;
    good.result = 'sent';
    await q.ack([good]);
    await q.fail(both.find((m) => m.id === bad) as Message, new Error('card declined'));
    // The retry is due at once: lease it briefly and let the lease run out (stale), then fail it.
    await claimAtLeast(q, 0, 1, 50);
    await sleep(150);
    const [again] = await claimAtLeast(q, 0, 1);
    await q.fail(again as Message, new Error('declined again'));
    expect(await q.reschedule(later, { delay: 120_000 })).toBe(true);
    expect(await q.cancel(gone)).toBe(true);

    const events = await collect(q, { groups: [0] });
    expect(events.map(key)).toEqual([
      `added ${ok}`,
      `added ${bad}`,
      `added ${later}`,
      `added ${gone}`,
      `started ${ok}`,
      `started ${bad}`,
      `done ${ok}`,
      `failed ${bad}`,
      `started ${bad}`,
      `stale ${bad}`,
      `started ${bad}`,
      `dead ${bad}`,
      `rescheduled ${later}`,
      `cancelled ${gone}`,
    ]);
    const first = (type: string, id: string) =>
      events.find((e) => e.type === type && e.id === id) as QueueEvent;
    expect(first('added', ok)).toMatchObject({ group: 0, name: 'email.send' });
    expect(first('started', ok).name).toBe('email.send');
    expect(first('done', ok).name).toBe('email.send');
    expect(first('failed', bad)).toMatchObject({ attempts: 1, error: 'card declined' });
    expect(first('dead', bad).reason).toBe('failed 3 of 3 attempts');
    expect(first('stale', bad).reason).toBe('lease expired');
    const rescheduled = first('rescheduled', later);
    expect(rescheduled.name).toBe('later.job');
    expect(rescheduled.dueAt).toBeGreaterThan(rescheduled.at + 100_000);
    // `at` is Redis's clock, in order.
    for (let i = 1; i < events.length; i++) {
      expect((events[i] as QueueEvent).at).toBeGreaterThanOrEqual((events[i - 1] as QueueEvent).at);
    }
  });

  it('resumes a restarted reader from its cursor: no gap, no repeat, inside an entry too', async () => {
    const q = await redis.queue({ events: true, groups: 3 });
    // 250 adds per call: entries of 100, 100 and 50 events, in every group.
    for (let call = 0; call < 4; call++) {
      await q.addBulk(
        Array.from({ length: 750 }, (_, i) => ({ body: i, options: { group: i % 3 } })),
      );
    }
    const all = await collect(q);
    expect(all).toHaveLength(3000);
    for (const cut of [1, 150, 1234, 2999]) {
      const head = await collect(q, {}, cut);
      const cursor = (head.at(-1) as QueueEvent).cursor;
      const tail = await collect(q, { from: cursor });
      expect([...head, ...tail].map(key)).toEqual(all.map(key));
    }
    // The object form: { group: entry id } per group.
    const head = await collect(q, {}, 100);
    const object = Object.fromEntries(
      (head.at(-1) as QueueEvent).cursor.split(',').map((part) => part.split(':')),
    );
    const tail = await collect(q, { from: object });
    expect([...head, ...tail].map(key)).toEqual(all.map(key));
  });

  it('reads on from a cursor while following, and sees what came while it was away', async () => {
    const q = await redis.queue({ events: true, groups: 2 });
    const reader = follow(q);
    await sleep(200);
    const before = await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ body: i })));
    await waitFor('20 added', () => (reader.seen.length >= 20 ? true : undefined));
    await reader.stop();
    const cursor = (reader.seen.at(-1) as QueueEvent).cursor;
    const away = await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ body: i })));
    const again = follow(q, { from: cursor });
    const after = await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ body: i })));
    await waitFor('40 more', () => (again.seen.length >= 40 ? true : undefined));
    await sleep(200);
    await again.stop();
    const ids = [...reader.seen, ...again.seen].map((e) => e.id).sort();
    expect(ids).toEqual([...before, ...away, ...after].sort());
  });

  it('keeps the stream bounded: about 1,000 entries a group', async () => {
    const q = await redis.queue({ events: true, groups: 1 });
    for (let i = 0; i < 30; i++) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => q.add(j)));
    }
    const length = await redis.plain.xlen(`{${q.config.prefix}:0}:fin`);
    expect(length).toBeGreaterThanOrEqual(1000);
    expect(length).toBeLessThanOrEqual(1100); // MAXLEN ~ trims whole nodes of 100 entries
  });

  it('with events off (the default) publishes only done, dead and cancelled, which waitFor needs', async () => {
    const q = await redis.queue({ attempts: 1 });
    const ok = await q.add('ok', { group: 0 });
    const bad = await q.add('bad', { group: 0 });
    const got = await claimAtLeast(q, 0, 2);
    await q.ack(got.filter((m) => m.id === ok));
    await q.fail(got.find((m) => m.id === bad) as Message, 'no');
    const later = await q.add('later', { group: 0, delay: 60_000, name: 'named' });
    await q.cancel(later);
    const events = await collect(q, { groups: [0] });
    expect(events.map(key)).toEqual([`done ${ok}`, `dead ${bad}`, `cancelled ${later}`]);
    expect(events[2]?.name).toBeUndefined(); // with events off no record is read for it
  });

  it('reads format-4 entries (id → done | dead, before events), and waitFor settles on them', async () => {
    const q = await redis.queue({ groups: 1 });
    const stream = `{${q.config.prefix}:0}:fin`;
    await redis.plain.xadd(stream, '*', 'old:1', 'done', 'old:2', 'dead');
    expect((await collect(q)).map(key)).toEqual(['done old:1', 'dead old:2']);
    // A launcher of format 4 finishing a job a new waiter waits for: what its ack.lua did.
    const id = await q.add('across versions', { id: 'job:old' });
    const waiting = q.waitFor(id, { timeoutMs: 10_000 });
    await sleep(200);
    const [m] = await claimAtLeast(q, 0, 1);
    await redis.plain.zrem(`{${q.config.prefix}:0}:active`, id);
    await redis.plain.hdel(`{${q.config.prefix}:0}:due`, id);
    await redis.plain.hdel(`{${q.config.prefix}:0}:msg`, id);
    await redis.plain.xadd(stream, '*', (m as Message).id, 'done');
    expect(await waiting).toEqual({ state: 'done', result: undefined });
  });

  it('refuses bad options with one line naming them', async () => {
    const q = await redis.queue();
    expect(() => q.events({ groups: [99] })).toThrow(/groups\[\]: must be a group number/);
    expect(() => q.events({ from: 'yesterday' })).toThrow(/from: must be 'now', 'start'/);
    expect(() => q.events({ from: { 1: 'x' } })).toThrow(/from\[1\]: must be a stream entry id/);
    expect(() => q.events({ follow: 'yes' as unknown as boolean })).toThrow(/follow/);
  });

  it('follows through a Redis restart: nothing missed, nothing twice', async () => {
    const port = await heldPort();
    const dir = tempDir('skyq-events-');
    let server: RedisServerHandle = await startStandalone({ port, dir, appendonly: true });
    const q = await openQueue({ redis: server.url }, { events: true, groups: 2 });
    try {
      const reader = follow(q);
      await sleep(200);
      const first = await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ body: i })));
      await waitFor('10 added', () => (reader.seen.length >= 10 ? true : undefined));
      await server.stop();
      await sleep(1000);
      server = await startStandalone({ port, dir, appendonly: true });
      await expectServedBy(server.url, server.pid);
      const second = await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ body: i })));
      await waitFor('20 added', () => (reader.seen.length >= 20 ? true : undefined), 20_000);
      await sleep(300);
      await reader.stop();
      expect(reader.seen.map((e) => e.id).sort()).toEqual([...first, ...second].sort());
    } finally {
      await q.close();
      await server.stop();
      removeTempDirs();
    }
  }, 60_000);
});

describe('events on a 3-master cluster', () => {
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it('follows every group, each on its own master, and resumes from a cursor', async () => {
    const q = new Queue({ cluster: cluster.nodes, prefix: freshPrefix('ec'), events: true });
    await q.ready();
    try {
      const reader = follow(q);
      await sleep(300);
      const ids = await q.addBulk(
        Array.from({ length: 100 }, (_, i) => ({ body: i, options: { group: i % 10 } })),
      );
      for (let g = 0; g < 10; g++) await q.ack(await claimAtLeast(q, g, 10));
      await waitFor('100 added and done', () => (reader.seen.length >= 300 ? true : undefined));
      await reader.stop();
      const byType = (type: string) =>
        reader.seen
          .filter((e) => e.type === type)
          .map((e) => e.id)
          .sort();
      expect(byType('added')).toEqual([...ids].sort());
      expect(byType('started')).toEqual([...ids].sort());
      expect(byType('done')).toEqual([...ids].sort());
      expect(new Set(reader.seen.map((e) => e.group)).size).toBe(10);
      const all = await collect(q);
      const head = await collect(q, {}, 123);
      const tail = await collect(q, { from: (head.at(-1) as QueueEvent).cursor });
      // One connection per group here: groups interleave, each in its own order.
      const perGroup = (list: QueueEvent[]) =>
        Array.from({ length: 10 }, (_, g) => list.filter((e) => e.group === g).map(key));
      expect(perGroup([...head, ...tail])).toEqual(perGroup(all));
      expect(all).toHaveLength(300);
    } finally {
      await q.close();
    }
  }, 60_000);
});
