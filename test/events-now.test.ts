// queue.events() from 'now' (the default) starts when events() is called, in every group at
// once: adds made right after the call, while the iteration reads where each group stands, are
// all seen. Before, each group's position was read one after the other on the first next(),
// and an event written meanwhile in a group not yet read was skipped (17 of 20 in a probe).
import { describe, expect, it } from 'vitest';
import type { QueueEvent } from '../src/index.js';
import { useQueueRedis, waitFor } from './helpers/queue.js';

const redis = useQueueRedis();

describe("events() from 'now'", () => {
  it('sees every event of the adds made right after the call, in every group', async () => {
    const queue = await redis.queue({ events: true, groups: 10 });
    const seen: QueueEvent[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const event of queue.events({ signal: stop.signal })) seen.push(event);
    })();
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => queue.add({ i }, { group: i % 10, delay: 60_000 })),
    );
    await waitFor(
      'every added event',
      () => ids.every((id) => seen.some((e) => e.type === 'added' && e.id === id)) || undefined,
    );
    stop.abort();
    await reading;
    expect(seen.filter((e) => e.type === 'added')).toHaveLength(20);
  });
});

describe('a first page asked for with the cursor a last page gives (null)', () => {
  it('is the first page, for list() and deadLetters.page(), so a plain loop works', async () => {
    const queue = await redis.queue({ groups: 2 });
    await queue.addBulk([{ body: 'a', options: { delay: 60_000 } }]);
    let cursor: string | null = null;
    const seen: string[] = [];
    do {
      const page = await queue.list('delayed', { cursor, limit: 1 });
      seen.push(...page.items.map((item) => item.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toHaveLength(1);
    expect((await queue.deadLetters.page({ after: null })).letters).toEqual([]);
  });
});
