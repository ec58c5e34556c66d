/**
 * Bytes a message costs in Redis while pending and once done (issue 16): 20,000 messages with a
 * 45-byte JSON body over 10 groups, leased and acked with a short result, on a fresh private
 * redis-server each run: every one kept (keepDone count above the messages, events off and on)
 * and keepDone: false.
 * used_memory before adding, after adding, and after acking, divided by the count.
 *
 *   npm run build && node dist/bench/history-memory.js [--count 20000]
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import type { QueueOptions } from '../src/queue/config.js';
import type { Message } from '../src/queue/message.js';
import { Queue } from '../src/queue/queue.js';
import { startRedisServer } from '../src/redis/server.js';

const BODY = { order: 12345, customer: 'c-98', total: 42.5 }; // 46 bytes of JSON

async function usedMemory(client: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
}

async function measure(count: number, options: QueueOptions) {
  const server = await startRedisServer({});
  const queue = new Queue({ redis: server.url, ...options });
  try {
    await queue.ready();
    const client = queue.client as Redis;
    const empty = await usedMemory(client);
    for (let at = 0; at < count; at += 1000) {
      await queue.addBulk(
        Array.from({ length: Math.min(1000, count - at) }, () => ({ body: BODY })),
      );
    }
    const pending = await usedMemory(client);
    for (let group = 0; group < queue.config.groups; group++) {
      for (;;) {
        const got: Message[] = await queue.claim(group, 500);
        if (got.length === 0) break;
        for (const m of got) {
          m.result = { ok: true };
          m.durationMs = 3;
        }
        await queue.ack(got);
      }
    }
    const done = await usedMemory(client);
    return { pending: (pending - empty) / count, done: (done - empty) / count };
  } finally {
    await queue.close();
    await server.stop();
  }
}

const { values } = parseArgs({ options: { count: { type: 'string', default: '20000' } } });
const count = Number(values.count);
const runs: [string, QueueOptions][] = [
  ['all kept (keepDone { count: 1e6 }), events off', { keepDone: { count: 1_000_000 } }],
  ['all kept, events: true', { keepDone: { count: 1_000_000 }, events: true }],
  ['keepDone: false', { keepDone: false }],
];
const bodyBytes = JSON.stringify(BODY).length;
console.log(`${count.toLocaleString('en-US')} messages, ${bodyBytes}-byte JSON body, 10 groups`);
for (const [what, options] of runs) {
  const figures = await measure(count, options);
  console.log(
    `${what.padEnd(52)} pending ${figures.pending.toFixed(0)} B/message, after ack ${figures.done.toFixed(0)} B/message`,
  );
}
