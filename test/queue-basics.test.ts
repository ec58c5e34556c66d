import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { homeGroup, type Message } from '../src/index.js';
import { claimAtLeast, redisNow, untilRedisTime, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

describe('ordering', () => {
  it('delivers delayed messages by due time, not by the order they were added', async () => {
    const q = await redis.queue();
    const delays = [400, 100, 300, 0, 200, 50];
    const ids = await q.addBulk(
      delays.map((delay) => ({ body: delay, options: { delay, group: 2 } })),
    );
    const last = await q.get(ids[0] as string);
    expect(last?.state).toBe('delayed');
    await untilRedisTime(redis.plain, last?.dueAt as number);
    const got = await q.claim(2, 10);
    expect(got.map((m) => m.body)).toEqual([0, 50, 100, 200, 300, 400]);
    // One add call, one clock reading: the delayed ones are due exactly the delays apart.
    const [ready, next] = got.map((m) => m.dueAt) as [number, number];
    expect(got.slice(1).map((m) => m.dueAt - next)).toEqual([0, 50, 150, 250, 350]);
    expect(ready).toBeLessThanOrEqual(next);
  });

  it('counts every delay of one addBulk from one instant, in every group', async () => {
    // Each group's chunk read the clock in turn: a pause between them once put the odd
    // groups' messages 1–3 ms later, and `delay: base + i` out of order over groups.
    const q = await redis.queue();
    const groups = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    const ids = await q.addBulk(
      groups.map((group) => ({ body: group, options: { group, delay: 3_600_000 } })),
    );
    const scores = await Promise.all(
      ids.map((id, group) => redis.plain.zscore(keyOf(q.config.prefix, group, 'delayed'), id)),
    );
    expect(new Set(scores).size).toBe(1);
  });

  it('delivers by priority, then first in first out among equal priority', async () => {
    const q = await redis.queue();
    const priorities = [5, 0, 5, 1_000_000, 1, 0, 5, 1];
    await q.addBulk(
      priorities.map((priority, i) => ({
        body: `${priority}/${i}`,
        options: { priority, group: 1 },
      })),
    );
    const got = await q.claim(1, 3);
    const rest = await q.claim(1, 10);
    expect([...got, ...rest].map((m) => m.body)).toEqual([
      '0/1',
      '0/5',
      '1/4',
      '1/7',
      '5/0',
      '5/2',
      '5/6',
      '1000000/3',
    ]);
    expect(rest.map((m) => m.priority)).toEqual([1, 5, 5, 5, 1_000_000]);
  });

  it('keeps messages with the same key in one group, in order', async () => {
    const q = await redis.queue();
    const items = Array.from({ length: 40 }, (_, i) => ({
      body: { key: i % 2 ? 'user-7' : 'user-8', n: i },
      options: { key: i % 2 ? 'user-7' : 'user-8' },
    }));
    const ids: string[] = [];
    for (const item of items) ids.push(await q.add(item.body, item.options));
    const groupOf = async (id: string) => (await q.get(id))?.group;
    const groups = await Promise.all(ids.map(groupOf));
    const odd = new Set(groups.filter((_, i) => i % 2));
    const even = new Set(groups.filter((_, i) => i % 2 === 0));
    expect(odd.size).toBe(1);
    expect(even.size).toBe(1);
    const [g7] = [...odd] as number[];
    const inGroup = groups.filter((g) => g === g7).length;
    const got = await claimAtLeast(q, g7 as number, inGroup);
    const seven = got
      .map((m) => m.body as { key: string; n: number })
      .filter((b) => b.key === 'user-7');
    expect(seven.map((b) => b.n)).toEqual(items.map((_, i) => i).filter((i) => i % 2));
  });
});

describe('addBulk', () => {
  it('returns ids in the order of the items, across groups and chunks', async () => {
    const q = await redis.queue();
    const n = 2_500; // more than one add.lua chunk for some groups
    const items = Array.from({ length: n }, (_, i) => ({
      body: { i },
      options: i % 3 === 0 ? { group: 4 } : { group: (i * 7) % 10 },
    }));
    const ids = await q.addBulk(items);
    expect(ids).toHaveLength(n);
    expect(new Set(ids).size).toBe(n);
    ids.forEach((id, i) => {
      expect(homeGroup(id, 10)).toBe(items[i]?.options.group);
    });
    for (const i of [0, 1, 2, 999, 1000, 1001, 1999, 2000, n - 1]) {
      const info = await q.get(ids[i] as string);
      expect(info).toMatchObject({ body: { i }, group: items[i]?.options.group, state: 'ready' });
    }
    const counts = await q.counts();
    expect(counts.reduce((sum, c) => sum + c.ready, 0)).toBe(n);
  });

  it('spreads messages without a group over the groups in turn, small batches whole', async () => {
    const q = await redis.queue();
    // One call each: every call takes the next group.
    const singles: string[] = [];
    for (let i = 0; i < 20; i++) singles.push(await q.add(i));
    const first = homeGroup(singles[0] as string, 10);
    expect(singles.map((id) => homeGroup(id, 10))).toEqual(singles.map((_, i) => (first + i) % 10));
    // A small batch stays in one group (one Redis call); a large one is cut in slices of 100.
    const small = await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ body: i })));
    expect(new Set(small.map((id) => homeGroup(id, 10)))).toEqual(new Set([first]));
    const large = await q.addBulk(Array.from({ length: 1000 }, (_, i) => ({ body: i })));
    const perGroup = new Map<number, number>();
    for (const id of large)
      perGroup.set(homeGroup(id, 10), (perGroup.get(homeGroup(id, 10)) ?? 0) + 1);
    expect([...perGroup.values()]).toEqual(Array(10).fill(100));
    // Each Queue starts at a group of its own, so short-lived producers do not all fill group 0.
    const starts = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const other = await redis.queue();
      starts.add(homeGroup(await other.add('x'), 10));
      await other.close();
    }
    expect(starts.size).toBeGreaterThan(1);
  });
});

describe('poll', () => {
  it('says when to look again: -1, the next due time, a lease expiry, or now', async () => {
    const q = await redis.queue();
    expect(await q.poll(0)).toMatchObject({ messages: [], nextDueAt: -1, acked: 0 });

    const id = await q.add('later', { group: 0, delay: 60_000 });
    const dueAt = (await q.get(id))?.dueAt;
    expect(await q.poll(0)).toMatchObject({ messages: [], nextDueAt: dueAt });

    await q.cancel(id);
    await q.add('now', { group: 0 });
    const leased = await q.poll(0, { leaseMs: 5_000 });
    expect(leased.messages).toHaveLength(1);
    expect(await q.poll(0)).toMatchObject({ messages: [], nextDueAt: leased.now + 5_000 });

    await q.addBulk(['a', 'b', 'c'].map((body) => ({ body, options: { group: 0 } })));
    const one = await q.poll(0, { max: 1, ack: leased.messages });
    expect(one.acked).toBe(1);
    expect(one.messages.map((m) => m.body)).toEqual(['a']);
    expect(one.nextDueAt).toBe(one.now); // more are ready
  });
});

describe('large batches', () => {
  it('claims 9,000 at once, then extends and acks them all in one call each', async () => {
    const q = await redis.queue();
    const n = 9_000; // more than Lua can unpack() into one call's arguments
    await q.addBulk(Array.from({ length: n }, (_, i) => ({ body: i, options: { group: 9 } })));
    const claimed = await q.claim(9, 10_000);
    expect(claimed).toHaveLength(n);
    expect(await q.extendLease(claimed, 60_000)).toBe(n);
    const result = await q.poll(9, { ack: claimed });
    expect(result.acked).toBe(n);
    expect(result.messages).toEqual([]);
    expect((await q.counts())[9]).toMatchObject({ ready: 0, active: 0 });
  });
});

describe('get and counts', () => {
  it('reports delayed, ready, active, dead and null for an unknown id', async () => {
    const q = await redis.queue();
    const delayed = await q.add('later', { delay: 60_000, group: 5 });
    const ready = await q.add('now', { group: 5, priority: 7 });
    const [activeId, deadId] = await q.addBulk([
      { body: 'working', options: { group: 6 } },
      { body: 'doomed', options: { group: 6, attempts: 1 } },
    ]);
    const claimed = await q.claim(6, 2);
    expect(claimed.map((m) => m.id)).toEqual([activeId, deadId]);
    const [active, doomed] = claimed as [Message, Message];
    expect(await q.fail(doomed, new Error('no luck'))).toBe('dead');

    const now = await redisNow(redis.plain);
    const d = await q.get(delayed);
    expect(d).toMatchObject({
      id: delayed,
      group: 5,
      state: 'delayed',
      body: 'later',
      attempts: 0,
    });
    expect(d?.dueAt).toBeGreaterThan(now + 50_000);
    expect(await q.get(ready)).toMatchObject({ state: 'ready', body: 'now', priority: 7 });
    expect(await q.get(activeId as string)).toMatchObject({ state: 'active', attempts: 1 });
    expect(await q.get(deadId as string)).toMatchObject({
      state: 'dead',
      body: 'doomed',
      attempts: 1,
      lastError: 'no luck',
      deadReason: 'failed 1 of 1 attempts',
    });
    expect(await q.get('no-such-id')).toBeNull();
    expect(await q.get('5:zzzz')).toBeNull();

    const counts = await q.counts();
    expect(counts).toHaveLength(10);
    expect(counts[5]).toEqual({
      group: 5,
      delayed: 1,
      ready: 1,
      active: 0,
      dead: 0,
      paused: false,
    });
    expect(counts[6]).toEqual({
      group: 6,
      delayed: 0,
      ready: 0,
      active: 1,
      dead: 1,
      paused: false,
    });
    const others = counts.filter((c) => c.group !== 5 && c.group !== 6);
    for (const c of others)
      expect(c).toEqual({
        group: c.group,
        delayed: 0,
        ready: 0,
        active: 0,
        dead: 0,
        paused: false,
      });

    // Only messages that have not started can be cancelled or moved.
    expect(await q.cancel(activeId as string)).toBe(false);
    expect(await q.reschedule(deadId as string, { delay: 0 })).toBe(false);
    expect(await q.cancel('no-such-id')).toBe(false);
    expect(await q.ack([active])).toBe(1);
    expect((await q.get(activeId as string))?.state).toBe('done'); // kept (keepDone)
    expect(await q.cancel(activeId as string)).toBe(false);
    expect(await q.cancel(delayed)).toBe(true);
    expect(await q.get(delayed)).toBeNull();
  });
});

describe('wake signal', () => {
  it('puts a token in the wake list when a message is due before the current head', async () => {
    const q = await redis.queue();
    const wake = keyOf(q.config.prefix, 8, 'wake');
    const tokens = () => redis.plain.llen(wake);

    await q.add('a', { group: 8, delay: 30_000 });
    expect(await tokens()).toBe(1); // empty set: anything is the new head
    await redis.plain.del(wake);

    await q.add('b', { group: 8, delay: 60_000 });
    expect(await tokens()).toBe(0); // later than the head: nobody needs waking

    await q.add('c', { group: 8, delay: 10_000 });
    expect(await tokens()).toBe(1);
    await q.add('d', { group: 8, delay: 5_000 });
    expect(await tokens()).toBe(1); // never more than one token
    await redis.plain.del(wake);

    const later = await q.add('e', { group: 8, delay: 20_000 });
    expect(await tokens()).toBe(0);
    expect(await q.reschedule(later, { delay: 1_000 })).toBe(true);
    expect(await tokens()).toBe(1); // rescheduled ahead of the head
    await redis.plain.del(wake);

    await q.add('f', { group: 8 });
    expect(await tokens()).toBe(1); // ready at once
  });
});

describe('pause and counts', () => {
  it('a paused group leases nothing but still takes acks; counts() says so', async () => {
    const q = await redis.queue();
    await q.add('first', { group: 3 });
    const [first] = await q.claim(3);
    await q.add('second', { group: 3 });
    expect(await q.pause(3)).toEqual([3]);
    const paused = await q.poll(3, { ack: [first as Message] });
    expect(paused).toMatchObject({ messages: [], paused: true, acked: 1, nextDueAt: -1 });
    expect((await q.counts())[3]).toMatchObject({ ready: 1, active: 0, paused: true });
    expect(await q.resume(3)).toEqual([3]);
    expect(await redis.plain.llen(keyOf(q.config.prefix, 3, 'wake'))).toBe(1);
    const resumed = await q.poll(3);
    expect(resumed.paused).toBe(false);
    expect(resumed.messages.map((m) => m.body)).toEqual(['second']);
  });

  it('a group whose key has the wrong type is reported with its reason; the others count', async () => {
    const q = await redis.queue();
    await q.add('fine', { group: 0 });
    await redis.plain.set(keyOf(q.config.prefix, 1, 'delayed'), 'foo');
    const counts = await q.counts();
    expect(counts[0]).toMatchObject({ ready: 1 });
    expect(counts[0]?.error).toBeUndefined();
    expect(counts[1]?.error).toMatch(/WRONGTYPE/);
    expect(counts[2]).toMatchObject({ delayed: 0, ready: 0 });
  });
});
