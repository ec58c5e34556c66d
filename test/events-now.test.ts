// queue.events() from 'now' (the default) starts when events() is called, in every group at
// once: adds made right after the call, while the iteration reads where each group stands, are
// all seen. Before, each group's position was read one after the other on the first next(),
// and an event written meanwhile in a group not yet read was skipped (17 of 20 in a probe).
// A follower called while Redis cannot be reached reads 'now' again until it can, and follows.
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Queue, type QueueEvent } from '../src/index.js';
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

describe('events({ follow: true }) called while Redis is away', () => {
  it("reads where 'now' is once Redis answers, and follows from there", async () => {
    // A TCP hop that closes every connection for its first 6 s (longer than a call may wait,
    // 5 s), then passes them through. Before, the first read of 'now' failed and so did the
    // iteration, for good.
    const port = Number(new URL((redis.target as { redis: string }).redis).port);
    const sockets = new Set<Socket>();
    const openAt = Date.now() + 6000;
    const proxy = createServer((client) => {
      sockets.add(client);
      if (Date.now() < openAt) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect(port, '127.0.0.1');
      sockets.add(upstream);
      client.pipe(upstream).pipe(client);
      for (const end of [client, upstream]) end.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `redis://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const away = new Queue({ redis: url, prefix: 'away', groups: 2 });
    const producer = await redis.queue({ prefix: 'away', groups: 2 });
    const seen: QueueEvent[] = [];
    const stop = new AbortController();
    let failure: unknown;
    const reading = (async () => {
      for await (const event of away.events({ follow: true, signal: stop.signal }))
        seen.push(event);
    })().catch((error) => {
      failure = error;
    });
    try {
      // A cancel is an event even with events off; one each 500 ms until the follower has one.
      await waitFor(
        'a cancelled event',
        async () => {
          if (failure) throw failure;
          await producer.cancel(await producer.add('x', { delay: 60_000 }));
          return seen.some((e) => e.type === 'cancelled') || undefined;
        },
        20_000,
        500,
      );
    } finally {
      stop.abort();
      await reading;
      await away.close();
      for (const socket of sockets) socket.destroy();
      proxy.close();
    }
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
