/**
 * Pages newest first and oldest first (issue 27, 2.3), against a reference model on a real
 * redis-server: done and dead entries over three groups, with many ties in time (ordered then by
 * group and id), paged by cursor with random limits while entries leave between pages. Every
 * entry that stays is seen exactly once, in the page's order, over all groups and in one; the
 * cursor keeps its page's order; a cursor of the other order is refused in one line.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { PageOrder, Queue } from '../src/index.js';
import { propertyParameters } from './helpers/property.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const GROUPS = 3;

interface Entry {
  group: number;
  at: number;
  id: string;
}

/** The model's order: time, group, id bytes; newest first is its reverse. */
function sorted(entries: Entry[], order: PageOrder): Entry[] {
  const up = [...entries].sort(
    (a, b) =>
      a.at - b.at || a.group - b.group || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)),
  );
  return order === 'oldest' ? up : up.reverse();
}

const entryArb = fc.record({
  group: fc.integer({ min: 0, max: GROUPS - 1 }),
  // Few distinct times: many ties, ordered by group and then id.
  at: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_006 }),
  id: fc.stringMatching(/^[a-z0-9]{1,6}$/),
});

const scenarioArb = fc.record({
  state: fc.constantFrom('done' as const, 'dead' as const),
  entries: fc.uniqueArray(entryArb, { minLength: 0, maxLength: 40, selector: (e) => e.id }),
  order: fc.constantFrom('newest' as const, 'oldest' as const),
  limits: fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 8 }),
  /** per page: which entry (by index, wrapped) leaves after it, if any */
  leaving: fc.array(fc.option(fc.nat(), { nil: undefined }), { maxLength: 8 }),
  oneGroup: fc.option(fc.integer({ min: 0, max: GROUPS - 1 }), { nil: undefined }),
  viaDeadLetters: fc.boolean(),
});

type Page = { ids: string[]; cursor: string | null };
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

async function pageOf(
  queue: Queue,
  s: Scenario,
  limit: number,
  cursor: string | null,
): Promise<Page> {
  const group = s.oneGroup === undefined ? {} : { group: s.oneGroup };
  // The first page names its order; later ones go on in their cursor's.
  const order = cursor === null ? { order: s.order } : {};
  if (s.state === 'dead' && s.viaDeadLetters) {
    const page = await queue.deadLetters.page({
      ...group,
      ...order,
      limit,
      ...(cursor ? { after: cursor } : {}),
    });
    return { ids: page.letters.map((l) => l.id), cursor: page.next };
  }
  const page = await queue.list(s.state, {
    ...group,
    ...order,
    limit,
    ...(cursor ? { cursor } : {}),
  });
  return { ids: page.items.map((i) => i.id), cursor: page.cursor };
}

describe('pages in both orders', () => {
  it('see every entry that stays once, in order, while others leave', async () => {
    const queue = await redis.queue({ groups: GROUPS, keepDone: { count: 1000, ageMs: 0 } });
    const key = (state: 'done' | 'dead', group: number) => keyOf(queue.config.prefix, group, state);
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        for (let g = 0; g < GROUPS; g++) await redis.plain.del(key('done', g), key('dead', g));
        for (const e of s.entries) await redis.plain.zadd(key(s.state, e.group), e.at, e.id);
        const inScope = s.entries.filter((e) => s.oneGroup === undefined || e.group === s.oneGroup);
        const gone = new Set<string>();
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let n = 0; n < 200; n++) {
          const page = await pageOf(queue, s, s.limits[n % s.limits.length] as number, cursor);
          seen.push(...page.ids);
          const leaves = s.leaving[n];
          if (leaves !== undefined && s.entries.length > 0) {
            const e = s.entries[leaves % s.entries.length] as Entry;
            await redis.plain.zrem(key(s.state, e.group), e.id);
            gone.add(e.id);
          }
          cursor = page.cursor;
          if (cursor === null) break;
        }
        expect(cursor).toBeNull();
        // Once each, in the page's order; every entry that stayed, and nothing else.
        expect(new Set(seen).size).toBe(seen.length);
        const order = sorted(inScope, s.order).map((e) => e.id);
        expect(seen).toEqual(order.filter((id) => seen.includes(id)));
        const stayed = order.filter((id) => !gone.has(id));
        expect(stayed.every((id) => seen.includes(id))).toBe(true);
        expect(seen.every((id) => order.includes(id))).toBe(true);
      }),
      propertyParameters(60),
    );
  }, 120_000);

  it('read newest first for done and dead unless told, and refuse a cursor of the other order', async () => {
    const queue = await redis.queue({ groups: GROUPS, keepDone: { count: 1000, ageMs: 0 } });
    for (const state of ['done', 'dead'] as const) {
      for (let i = 0; i < 6; i++)
        await redis.plain.zadd(keyOf(queue.config.prefix, i % GROUPS, state), 1000 + i, `e${i}`);
      const ids = async (o?: { order?: PageOrder }) =>
        (await queue.list(state, { limit: 10, ...o })).items.map((i) => i.id);
      expect(await ids()).toEqual(['e5', 'e4', 'e3', 'e2', 'e1', 'e0']);
      expect(await ids({ order: 'oldest' })).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5']);
      const first = await queue.list(state, { limit: 2, order: 'oldest' });
      // The cursor keeps its order; the other order is refused, naming both.
      const next = await queue.list(state, { cursor: first.cursor as string, limit: 2 });
      expect(next.items.map((i) => i.id)).toEqual(['e2', 'e3']);
      await expect(
        queue.list(state, { cursor: first.cursor as string, order: 'newest' }),
      ).rejects.toThrow(
        /^cursor: is the cursor of a page read oldest first, and this page reads newest first$/,
      );
    }
    expect((await queue.deadLetters.page({ limit: 10 })).letters.map((l) => l.id)).toEqual([
      'e5',
      'e4',
      'e3',
      'e2',
      'e1',
      'e0',
    ]);
    const oldest = await queue.deadLetters.page({ limit: 4, order: 'oldest' });
    await expect(
      queue.deadLetters.page({ after: oldest.next as string, order: 'newest' }),
    ).rejects.toThrow(/^after: is the cursor of a page read oldest first/);
    await expect(queue.list('delayed', { order: 'latest' as PageOrder })).rejects.toThrow(
      /^order: must be one of newest, oldest \(got "latest"\)$/,
    );
    // The offset way of one group reads either end.
    expect(
      (await queue.deadLetters.list({ group: 0, order: 'newest', offset: 1 })).map((l) => l.id),
    ).toEqual(['e0']);
    expect((await queue.deadLetters.list({ group: 0, offset: 1 })).map((l) => l.id)).toEqual([
      'e3',
    ]);
  });

  it('cost what their limit costs at any depth, both ways', async () => {
    const queue = await redis.queue({ groups: 1, keepDone: { count: 100_000, ageMs: 0 } });
    const done = keyOf(queue.config.prefix, 0, 'done');
    for (let i = 0; i < 20_000; i += 1000) {
      const pairs = Array.from({ length: 1000 }, (_, k) => [1_000 + i + k, `d${i + k}`]).flat();
      await redis.plain.zadd(done, ...(pairs as (string | number)[]));
    }
    const commands = async (work: () => Promise<unknown>) => {
      const count = async () =>
        Number(/total_commands_processed:(\d+)/.exec(await redis.plain.info('stats'))?.[1]);
      const before = await count();
      await work();
      return (await count()) - before - 1; // the INFO itself
    };
    for (const order of ['newest', 'oldest'] as const) {
      const cursors: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { cursor: string | null } = await queue.list('done', {
          limit: 500,
          ...(cursor ? { cursor } : { order }),
        });
        cursor = page.cursor;
        if (cursor) cursors.push(cursor);
      } while (cursor);
      expect(cursors).toHaveLength(39);
      const second = await commands(() => queue.list('done', { cursor: cursors[0], limit: 50 }));
      const deep = await commands(() => queue.list('done', { cursor: cursors[37], limit: 50 }));
      expect(deep, `${order}: second ${second}, deep ${deep}`).toBeLessThanOrEqual(second + 2);
    }
  });
});
