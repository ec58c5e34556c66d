/**
 * Dead-letter pages cost what their limit costs, not their depth (issue 13, item 5.3): 100 dead
 * letters of 512 KiB over 10 groups on a real redis-server. A deep page (after 95 letters, by
 * cursor) sends as many commands and reads as many bytes as the second one, newest first and
 * oldest first, and a preview reads only the start of each body. The offset way (each group's first offset + limit whole records,
 * what list({ offset }) over all groups did) is measured beside it for the figures.
 */
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const GROUPS = 10;
const LETTERS = 100;
const BODY = 512 * 1024;
let queue: Queue;

/** Commands Redis ran and bytes it sent while `work` ran, with its time and RSS growth. */
async function cost(client: Redis, work: () => Promise<unknown>) {
  const stats = async () => {
    const info = await client.info('stats');
    const number = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1]);
    return { calls: number('total_commands_processed'), out: number('total_net_output_bytes') };
  };
  const before = await stats();
  const rss = process.memoryUsage().rss;
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const after = await stats();
  return {
    ms: Math.round(ms),
    calls: after.calls - before.calls - 1, // the INFO itself
    outBytes: after.out - before.out,
    rssMb: Math.round((process.memoryUsage().rss - rss) / 1e6),
  };
}

beforeAll(async () => {
  queue = await redis.queue({ groups: GROUPS, attempts: 1 });
  for (let i = 0; i < LETTERS; i += 10) {
    const bodies = Array.from({ length: 10 }, (_, k) => ({
      body: `${i + k}:${'d'.repeat(BODY)}`,
      options: { group: (i + k) % GROUPS },
    }));
    await queue.addBulk(bodies);
  }
  // A claim reads about 1 MiB of records: claim until every group is empty.
  for (let g = 0; g < GROUPS; g++) {
    for (;;) {
      const messages = await queue.claim(g, LETTERS);
      if (messages.length === 0) break;
      for (const message of messages) await queue.fail(message, 'no');
    }
  }
  expect((await queue.counts()).reduce((n, c) => n + c.dead, 0)).toBe(LETTERS);
}, 120_000);

describe('a deep dead-letter page', () => {
  it.each(['newest', 'oldest'] as const)(
    '%s first costs what the second page costs, and previews read no whole bodies',
    async (order) => {
      const limit = 5;
      let after: string | undefined;
      let second: string | undefined;
      const seen: string[] = [];
      for (let page = 0; page < 19; page++) {
        if (page === 1) second = after;
        const got = await queue.deadLetters.page({
          limit,
          previewBytes: 300,
          ...(after ? { after } : { order }),
        });
        seen.push(...got.letters.map((l) => l.id));
        after = got.next as string;
      }
      expect(new Set(seen).size).toBe(95);
      const first = await cost(redis.plain, () =>
        queue.deadLetters.page({ limit, previewBytes: 300, order }),
      );
      // A page after a cursor finds its place in each group (a few O(log n) lookups): the second
      // page is the one a deep page compares with.
      const shallow = await cost(redis.plain, () =>
        queue.deadLetters.page({ limit, previewBytes: 300, after: second as string }),
      );
      let deep: {
        letters: { id: string; truncated?: boolean; body: unknown }[];
        next: string | null;
      } = {
        letters: [],
        next: null,
      };
      const deepCost = await cost(redis.plain, async () => {
        deep = await queue.deadLetters.page({ limit, previewBytes: 300, after });
      });
      // The offset way, for the figure: each group's first 95 + 5 whole records.
      const offsetCost = await cost(redis.plain, () =>
        Promise.all(
          Array.from({ length: GROUPS }, (_, group) =>
            queue.deadLetters.list({ group, limit: 95 + limit }),
          ),
        ),
      );
      console.log(
        JSON.stringify({ first, second: shallow, deep: deepCost, offsetWay: offsetCost }),
      );
      expect(deep.letters).toHaveLength(limit);
      expect(new Set([...seen, ...deep.letters.map((l) => l.id)]).size).toBe(100);
      expect(deep.letters.every((l) => l.truncated === true && String(l.body).length <= 300)).toBe(
        true,
      );
      // A full page names the next one; after the last letter it is empty and names none.
      const end = await queue.deadLetters.page({ limit, after: deep.next as string });
      expect(end).toEqual({ letters: [], next: null });
      // Bounded by the limit: the same commands as the second page, and no whole body sent.
      expect(deepCost.calls).toBeLessThanOrEqual(shallow.calls + 2);
      expect(deepCost.outBytes).toBeLessThan(GROUPS * limit * 2048);
      expect(offsetCost.outBytes).toBeGreaterThan(LETTERS * BODY);
    },
  );
});
