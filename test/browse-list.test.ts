/**
 * queue.list (issue 16, part 3): pages of every state by cursor on a real redis-server and on a
 * real 3-master cluster. 10,000 delayed messages are each seen once, in order, also while others
 * are added and removed between pages; a prefix filters ids with a bounded scan; raw members
 * other programs ZADD show; bad input is refused with one line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKeys, type ListItem, type ListState, type Queue } from '../src/index.js';
import { PREFIX_SCAN } from '../src/queue/browse/list.js';
import { claimAtLeast, openQueue, redisNow, useQueueRedis } from './helpers/queue.js';
import { type RedisClusterHandle, startCluster } from './helpers/redis.js';

const redis = useQueueRedis();

/** Follows cursors to the end; returns every item and how many pages it took. */
async function pageAll(
  queue: Queue,
  state: ListState,
  options: { group?: number; limit?: number; prefix?: string } = {},
  between?: (page: number, last: ListItem | undefined) => Promise<void>,
): Promise<{ items: ListItem[]; pages: number }> {
  const items: ListItem[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await queue.list(state, { ...options, ...(cursor ? { cursor } : {}) });
    pages++;
    items.push(...page.items);
    if (page.cursor === null) return { items, pages };
    cursor = page.cursor;
    await between?.(pages, page.items.at(-1));
    if (pages > 100_000) throw new Error('the cursor does not advance');
  }
}

describe('10,000 delayed messages', () => {
  let queue: Queue;
  let ids: string[];

  beforeAll(async () => {
    queue = await redis.queue({ groups: 10 });
    // Many share a due time (ties), so the order inside one score matters too.
    const items = Array.from({ length: 10_000 }, (_, i) => ({
      body: { i },
      options: { delay: 3_600_000 + Math.floor(i / 7) * 1000 },
    }));
    ids = [];
    for (let i = 0; i < items.length; i += 2000)
      ids.push(...(await queue.addBulk(items.slice(i, i + 2000))));
  }, 60_000);

  it('are each seen once, by due time, a page of 100 at a time', async () => {
    const { items, pages } = await pageAll(queue, 'delayed', { limit: 100 });
    expect(pages).toBe(100);
    expect(items.map((item) => item.id).sort()).toEqual([...ids].sort());
    expect(new Set(items.map((item) => item.id)).size).toBe(10_000);
    for (let i = 1; i < items.length; i++) {
      expect((items[i] as ListItem).dueAt).toBeGreaterThanOrEqual(
        (items[i - 1] as ListItem).dueAt ?? 0,
      );
    }
    const first = items[0] as ListItem;
    expect(first).toMatchObject({ state: 'delayed', attempts: 0, truncated: false });
    expect(JSON.parse(first.preview)).toHaveProperty('i');
  }, 60_000);

  it('miss none that stayed while others are added and removed between pages', async () => {
    const removed = new Set<string>();
    const added: string[] = [];
    let k = 0;
    const { items } = await pageAll(queue, 'delayed', { limit: 250 }, async (page, last) => {
      // Cancel some not seen yet, some seen, and the cursor's own (every third page); add some
      // before and after the cursor's place.
      const cancel: (string | undefined)[] = [
        ids[(page * 97) % ids.length],
        ids[(page * 211 + 5) % ids.length],
      ];
      if (page % 3 === 0) cancel.push(last?.id);
      for (const id of cancel) {
        if (id && !removed.has(id) && (await queue.cancel(id))) removed.add(id);
      }
      const fresh = await queue.addBulk([
        { body: `early ${k}`, options: { delay: 3_600_000 } },
        { body: `late ${k}`, options: { delay: 3_600_000 + 5_000_000 } },
        // Same due time as a message already listed: it sorts after it by id, or before.
        { body: `tie ${k}`, options: { delay: 3_600_000 + page * 4000 } },
      ]);
      k++;
      added.push(...fresh);
    });
    const seen = items.map((item) => item.id);
    expect(new Set(seen).size).toBe(seen.length); // nothing twice
    const seenSet = new Set(seen);
    const untouched = ids.filter((id) => !removed.has(id));
    expect(untouched.filter((id) => !seenSet.has(id))).toEqual([]); // none skipped
    expect(removed.size).toBeGreaterThan(20);
    // Ones added after the cursor's place are seen: every "late" one (due beyond all others).
    const late = added.filter((_, i) => i % 3 === 1);
    expect(late.filter((id) => !seenSet.has(id))).toEqual([]);
    for (const id of [...removed, ...added]) await queue.cancel(id);
  }, 120_000);

  it('keeps its place when the cursor’s own message leaves (a cancelled last item)', async () => {
    const first = await queue.list('delayed', { limit: 10 });
    const last = first.items.at(-1) as ListItem;
    expect(await queue.cancel(last.id)).toBe(true);
    const next = await queue.list('delayed', { limit: 10, cursor: first.cursor as string });
    const straight = (await queue.list('delayed', { limit: 19 })).items.slice(9);
    expect(next.items.map((i) => i.id)).toEqual(straight.map((i) => i.id));
    await queue.add({ back: true }, { id: 'put-back', delay: 3_600_000 });
  });

  it('one group’s pages hold only that group', async () => {
    const { items } = await pageAll(queue, 'delayed', { group: 3, limit: 333 });
    expect(items.length).toBeGreaterThan(900);
    expect(items.every((item) => item.group === 3)).toBe(true);
  }, 60_000);
});

describe('each state', () => {
  it('lists ready, active, done and dead messages with their own times', async () => {
    const queue = await redis.queue({ groups: 2, attempts: 1 });
    await queue.add('due now', { group: 0, id: 'r-plain' });
    await queue.add('urgent', { group: 0, id: 'r-pri', priority: 5 });
    await queue.add({ later: 1 }, { group: 1, id: 'd-later', delay: 60_000, name: 'mail.send' });
    const ready = await pageAll(queue, 'ready', { limit: 1 });
    expect(ready.items.map((i) => i.id).sort()).toEqual(['r-plain', 'r-pri']);
    const delayed = (await queue.list('delayed')).items;
    expect(delayed).toMatchObject([{ id: 'd-later', name: 'mail.send', preview: '{"later":1}' }]);
    expect(delayed[0]?.dueAt).toBeGreaterThan(Date.now() + 50_000);

    const [a, b] = await claimAtLeast(queue, 0, 2);
    const active = (await queue.list('active')).items;
    expect(active.map((i) => i.id).sort()).toEqual(['r-plain', 'r-pri']);
    expect(active[0]).toMatchObject({ attempts: 1 });
    expect(active[0]?.leaseUntil).toBeGreaterThan(Date.now());

    await queue.ack([a as never]);
    await queue.fail(b as never, new Error('boom'));
    const done = (await queue.list('done')).items;
    const dead = (await queue.list('dead')).items;
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ attempts: 1, state: 'done' });
    expect(done[0]?.finishedAt).toBeGreaterThan(0);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ attempts: 1, state: 'dead' });
    expect(dead[0]?.reason).toBeTruthy();
    expect(new Set([done[0]?.id, dead[0]?.id])).toEqual(new Set(['r-plain', 'r-pri']));
    expect((await queue.list('ready')).items).toEqual([]);
  });

  it('hides done jobs past the kept age, as get() does, in the page and the counts', async () => {
    const queue = await redis.queue({ groups: 1, keepDone: { count: 100, ageMs: 400 } });
    await queue.addBulk([{ body: 'old' }, { body: 'older' }]);
    await queue.ack(await claimAtLeast(queue, 0, 2));
    expect((await queue.list('done')).items).toHaveLength(2);
    expect((await queue.listCounts()).done).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 600));
    // Nothing acked since, so the trimming has not run: the entries are still stored.
    expect(await redis.plain.zcard(`{${queue.config.prefix}:0}:done`)).toBe(2);
    expect((await queue.list('done')).items).toEqual([]);
    expect(await queue.listCounts()).toEqual({
      delayed: 0,
      ready: 0,
      active: 0,
      done: 0,
      dead: 0,
      waiting: 0,
    });
  });

  it('shows raw members other programs ZADD, binary ones and huge bodies by their start', async () => {
    const queue = await redis.queue({ groups: 1 });
    const [delayedKey] = groupKeys(queue.config.prefix, 0);
    const now = await redisNow(redis.plain);
    await redis.plain.zadd(delayedKey as string, now + 60_000, 'foreign-1');
    await redis.plain.zadd(delayedKey as string, now + 61_000, Buffer.from([0xff, 0x00, 0x41]));
    await redis.plain.zadd(delayedKey as string, 'inf', 'never');
    await redis.plain.zadd(delayedKey as string, '-inf', 'since-ever');
    await queue.add('x'.repeat(200_000), { id: 'huge', delay: 62_000 }); // spilled to a key of its own
    await queue.add(Buffer.from([1, 2, 3, 250]), { id: 'bytes', delay: 63_000 });
    const items = (await pageAll(queue, 'delayed', { limit: 2 })).items;
    expect(items.map((i) => i.id)).toEqual(['foreign-1', '\\xff\u0000A', 'huge', 'bytes', 'never']);
    expect(items[0]?.preview).toBe('foreign-1');
    expect(items[1]?.idBytes).toEqual(Buffer.from([0xff, 0x00, 0x41]));
    expect(items[1]?.preview).toBe('binary: ff 00 41');
    expect(items[2]).toMatchObject({ preview: 'x'.repeat(300), truncated: true });
    expect(items[2]?.recordBytes).toBeGreaterThan(200_000);
    expect(items[3]?.preview).toBe('binary: 01 02 03 fa');
    expect(items[4]?.dueAt).toBe(9e15);
    expect((await queue.list('ready')).items.map((i) => i.id)).toEqual(['since-ever']);
  });
});

describe('an id prefix', () => {
  it('finds matches among many others with a bounded scan, following cursors of short pages', async () => {
    const queue = await redis.queue({ groups: 2 });
    // Group 0: 2 × PREFIX_SCAN others, with matches past the first scan's reach; group 1:
    // matches before and after those. A page may show group 1's later match only once group
    // 0 has been looked at up to it.
    const items = Array.from({ length: 2 * PREFIX_SCAN }, (_, i) => ({
      body: i,
      options: { id: `other-${i}`, delay: 60_000 + i * 10, group: 0 },
    }));
    for (const t of [PREFIX_SCAN * 1.25, PREFIX_SCAN * 1.25 + 1, PREFIX_SCAN * 1.5]) {
      items.push({
        body: t,
        options: { id: `order-0-${t}`, delay: 60_000 + t * 10 + 5, group: 0 },
      });
    }
    for (const t of [10, PREFIX_SCAN * 1.75]) {
      items.push({
        body: t,
        options: { id: `order-1-${t}`, delay: 60_000 + t * 10 + 5, group: 1 },
      });
    }
    for (let i = 0; i < items.length; i += 2000) await queue.addBulk(items.slice(i, i + 2000));
    const wanted = items
      .filter((item) => item.options.id.startsWith('order-'))
      .sort((x, y) => x.options.delay - y.options.delay)
      .map((i) => i.options.id);
    const first = await queue.list('delayed', { prefix: 'order-', limit: 50 });
    // One page looks at PREFIX_SCAN entries a group: not all matches are reached yet.
    expect(first.items.length).toBeLessThan(wanted.length);
    expect(first.cursor).not.toBeNull();
    const { items: found, pages } = await pageAll(queue, 'delayed', {
      prefix: 'order-',
      limit: 50,
    });
    expect(found.map((i) => i.id)).toEqual(wanted);
    expect(pages).toBeGreaterThan(1);
    expect((await queue.list('delayed', { prefix: 'nothing-' })).items).toEqual([]);
  });
});

describe('bad input', () => {
  it('is refused with one line naming what is wrong', async () => {
    const queue = await redis.queue({ groups: 2 });
    const cases: [() => Promise<unknown>, RegExp][] = [
      [
        () => queue.list('sleeping' as ListState),
        /^state: must be one of delayed, ready, active, done, dead/,
      ],
      [() => queue.list('delayed', { limit: 0 }), /^limit: must be between 1 and 500/],
      [() => queue.list('delayed', { limit: 1.5 }), /^limit: must be an integer/],
      [() => queue.list('delayed', { group: 2 }), /^group: must be a group number from 0 to 1/],
      [
        () => queue.list('delayed', { cursor: 'nonsense' }),
        /^cursor: is not a cursor from a delayed page/,
      ],
      [() => queue.list('delayed', { prefix: 5 as unknown as string }), /^prefix: must be text/],
      [() => queue.list('delayed', { after: 'x' } as never), /after/],
    ];
    await queue.addBulk([
      { body: 1, options: { delay: 60_000 } },
      { body: 2, options: { delay: 60_001 } },
    ]);
    const page = await queue.list('delayed', { limit: 1 });
    cases.push([
      () => queue.list('dead', { cursor: page.cursor as string }),
      /^cursor: is a cursor from a delayed page, not a dead one/,
    ]);
    for (const [call, message] of cases) {
      const error = await call().then(
        () => null,
        (e: Error) => e,
      );
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toContain('\n');
    }
  });
});

describe('on a 3-master cluster', () => {
  let cluster: RedisClusterHandle;
  let queue: Queue;

  beforeAll(async () => {
    cluster = await startCluster();
    queue = await openQueue({ cluster: cluster.nodes }, { groups: 10 });
  });
  afterAll(async () => {
    await queue?.close();
    await cluster?.stop();
  });

  it('pages through every group across the masters, each message once', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({
      body: i,
      options: { delay: 60_000 + (i % 37) },
    }));
    const ids = await queue.addBulk(items);
    const { items: seen } = await pageAll(queue, 'delayed', { limit: 128 });
    expect(seen.map((i) => i.id).sort()).toEqual([...ids].sort());
    expect(new Set(seen.map((i) => i.group)).size).toBe(10);
  }, 60_000);
});
