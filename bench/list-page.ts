/**
 * What one queue.list page costs at the end of a deep delayed set (issue 16, part 3): Redis's
 * own time for the page (SLOWLOG with every command logged), the commands sent and the
 * bytes Redis wrote back (INFO stats), for the first page, a page at the end (by cursor), the same page after
 * the cursor's own message left (the rank search), and a prefix page that matches nothing (the
 * scan budget). An offset read (ZRANGEBYSCORE … LIMIT offset n) at the same depth is beside it.
 *
 *   npm run build && node dist/bench/list-page.js [--count 1000000] [--groups 1] [--limit 50]
 *
 * Runs on a private redis-server on loopback.
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { keyOf } from '../src/base/keys.js';
import { encodeListCursor } from '../src/queue/browse/cursor.js';
import { Queue } from '../src/queue/queue.js';
import { startRedisServer } from '../src/redis/server.js';

const REPEAT = 20;
/** the commands this client sends (list.lua itself calls none of them) */
const SENT = new Set(['evalsha', 'eval', 'getrange', 'mget', 'zrangebyscore']);

interface Cost {
  redisUs: number;
  commands: number;
  /** commands scripts ran inside those */
  inner: number;
  bytesOut: number;
  items: number;
}

/** What reading the figures costs by itself (INFO calls and replies), taken off each reading. */
const baseline = { bytesOut: 0 };

/**
 * Redis's figures around `work`: SLOWLOG (logging every command) gives each command the client
 * sent with its time in Redis, a script's inner calls included in its own (they are not logged
 * apart); INFO stats gives the bytes Redis wrote, less what reading the figures writes.
 */
async function cost(client: Redis, work: () => Promise<number>): Promise<Cost> {
  const out = async () =>
    Number(/total_net_output_bytes:(\d+)/.exec(await client.info('stats'))?.[1]);
  await client.slowlog('RESET');
  const before = await out();
  const items = await work();
  const after = await out();
  const entries = (await client.slowlog('GET', 1024)) as [number, number, number, string[]][];
  const mine = entries.filter(([, , , argv]) => {
    const name = String(argv[0]).toLowerCase();
    return name !== 'slowlog' && name !== 'info';
  });
  // Redis 7 logs a script's inner calls too, within the script's own time: count them apart.
  const sent = mine.filter(([, , , argv]) => SENT.has(String(argv[0]).toLowerCase()));
  return {
    redisUs: sent.reduce((sum, [, , us]) => sum + Number(us), 0),
    commands: sent.length,
    inner: mine.length - sent.length,
    bytesOut: after - before - baseline.bytesOut,
    items,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

async function measure(client: Redis, name: string, work: () => Promise<number>): Promise<void> {
  const runs: Cost[] = [];
  for (let i = 0; i < REPEAT; i++) runs.push(await cost(client, work));
  const pick = (f: (c: Cost) => number) => median(runs.map(f));
  console.log(
    `${name.padEnd(44)} ${String(pick((c) => c.redisUs)).padStart(7)} µs  ${String(pick((c) => c.commands)).padStart(3)} sent (${String(pick((c) => c.inner)).padStart(4)} inside)  ${String(pick((c) => c.bytesOut)).padStart(8)} B out  ${pick((c) => c.items)} items`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '1000000' },
      groups: { type: 'string', default: '1' },
      limit: { type: 'string', default: '50' },
    },
  });
  const count = Number(values.count);
  const groups = Number(values.groups);
  const limit = Number(values.limit);
  const server = await startRedisServer({});
  const queue = new Queue({ redis: server.url, groups, keepDone: false });
  try {
    await queue.ready();
    const admin = queue.client as Redis;
    await admin.config('SET', 'slowlog-log-slower-than', '0');
    await admin.config('SET', 'slowlog-max-len', '1024');
    const started = performance.now();
    const CHUNK = 5000;
    for (let at = 0; at < count; at += CHUNK * 4) {
      await Promise.all(
        Array.from({ length: 4 }, (_, k) => {
          const from = at + k * CHUNK;
          const n = Math.max(0, Math.min(CHUNK, count - from));
          return queue.addBulk(
            Array.from({ length: n }, (_, i) => ({
              body: { order: from + i, note: 'a delayed order time-out' },
              options: { delay: 3_600_000 + ((from + i) % 600_000) },
            })),
          );
        }),
      );
    }
    const client = queue.client as Redis;
    const delayedKey = keyOf(queue.config.prefix, 0, 'delayed');
    const depth = await client.zcard(delayedKey);
    console.log(
      `${count} delayed messages over ${groups} group(s) added in ${Math.round(performance.now() - started)} ms; group 0 holds ${depth}; pages of ${limit}`,
    );
    console.log(`used_memory: ${/used_memory_human:(\S+)/.exec(await client.info('memory'))?.[1]}`);
    const [member, score] = (await client.zrangeBuffer(
      delayedKey,
      -limit - 1,
      -limit - 1,
      'WITHSCORES',
    )) as Buffer[];
    if (!member || !score) throw new Error('the delayed set is empty');
    const atEnd = encodeListCursor(
      'delayed',
      { phase: 0, score: score.toString(), group: 0, member },
      'oldest',
    );
    const page = async (options: { cursor?: string; prefix?: string }) =>
      (await queue.list('delayed', { limit, ...options })).items.length;

    const idle: Cost[] = [];
    for (let i = 0; i < REPEAT; i++) idle.push(await cost(client, async () => 0));
    baseline.bytesOut = median(idle.map((c) => c.bytesOut));
    await measure(client, 'first page', () => page({}));
    await measure(client, `page at the end (after rank ${depth - limit - 1})`, () =>
      page({ cursor: atEnd }),
    );
    // The cursor's own message leaves: its place is found by a rank search among its score.
    await queue.cancel(member);
    await measure(client, 'same page, the cursor’s message gone', () => page({ cursor: atEnd }));
    await measure(client, 'prefix matching nothing, at the end', () =>
      page({ cursor: atEnd, prefix: 'no-such-id' }),
    );
    await measure(client, 'prefix matching nothing, from the start', () =>
      page({ prefix: 'no-such-id' }),
    );
    await measure(
      client,
      `offset read: ZRANGEBYSCORE LIMIT ${depth - limit} ${limit}`,
      async () =>
        (await client.zrangebyscore(delayedKey, '-inf', '+inf', 'LIMIT', depth - limit, limit))
          .length,
    );
  } finally {
    await queue.close();
    await server.stop();
  }
}

await main();
