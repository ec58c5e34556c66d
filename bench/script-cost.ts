/**
 * What the scripts cost Redis, with no thread competing for the cores (issue 18): N messages
 * added in calls of 1,000 (due 0–2 s ahead, random order, 10 groups), then every group drained
 * by poll + ack in this process, batch 200, as the actors do. Prints Redis CPU per message for
 * each part (INFO cpu) and its Node CPU.
 *
 *   npm run build && node dist/bench/script-cost.js [--count 100000] [--no-history]
 *
 * CPU seconds move ±15 % run to run on this machine; instruction counts do not. To count
 * instructions, run the server under callgrind and point this at it:
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out redis-server --port 18555 --save '' &
 *   node dist/bench/script-cost.js --redis redis://127.0.0.1:18555 --count 20000
 *   redis-cli -p 18555 shutdown nosave; callgrind_annotate /tmp/cg.out | head -30
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import type { Message } from '../src/queue/message.js';
import { Queue } from '../src/queue/queue.js';
import { startRedisServer } from '../src/redis/server.js';
import { assertLoopback } from './workloads.js';

const GROUPS = 10;
const SPREAD_MS = 2_000;

async function redisCpu(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1]);
  return field('used_cpu_user') + field('used_cpu_sys');
}

function nodeCpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/** Adds then drains `count` messages; CPU per message of each part, in µs. */
async function measure(url: string, count: number, keepDone: boolean) {
  const queue = new Queue({ redis: url, groups: GROUPS, ...(keepDone ? {} : { keepDone: false }) });
  try {
    await queue.ready();
    const client = queue.client as Redis;
    const body = 'x'.repeat(100);
    // A fixed-seed sequence: every run adds the same due times.
    let seed = 1;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const start = Date.now();
    let redisBefore = await redisCpu(client);
    let nodeBefore = process.cpuUsage();
    for (let at = 0; at < count; at += 1000) {
      const size = Math.min(1000, count - at);
      await queue.addBulk(
        Array.from({ length: size }, () => ({
          body,
          options: { runAt: start + Math.floor(next() * SPREAD_MS) },
        })),
      );
    }
    const add = { redis: (await redisCpu(client)) - redisBefore, node: nodeCpuSince(nodeBefore) };
    // Everything due before draining: the claims take full batches, as a busy actor's do.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, start + SPREAD_MS - Date.now())),
    );
    redisBefore = await redisCpu(client);
    nodeBefore = process.cpuUsage();
    let handled = 0;
    await Promise.all(
      Array.from({ length: GROUPS }, async (_, group) => {
        let ack: Message[] = [];
        for (;;) {
          const polled = await queue.poll(group, {
            max: 200,
            leaseMs: 30_000,
            ack,
            lookaheadMs: 250,
          });
          ack = polled.messages;
          handled += ack.length;
          if (ack.length === 0) return;
        }
      }),
    );
    const drain = { redis: (await redisCpu(client)) - redisBefore, node: nodeCpuSince(nodeBefore) };
    if (handled !== count) throw new Error(`drained ${handled} of ${count} messages`);
    const perMessage = (seconds: number) => ((seconds * 1e6) / count).toFixed(2);
    return {
      add: `Redis ${perMessage(add.redis)} µs, Node ${perMessage(add.node)} µs a message`,
      claimAndAck: `Redis ${perMessage(drain.redis)} µs, Node ${perMessage(drain.node)} µs a message`,
    };
  } finally {
    await queue.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '100000' },
      redis: { type: 'string' },
      'no-history': { type: 'boolean', default: false },
    },
  });
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1000)
    throw new Error('--count must be a whole number ≥ 1000');
  const keepDone = !values['no-history'];
  const history = keepDone ? 'history kept (the default)' : 'keepDone: false';
  if (values.redis) {
    assertLoopback(values.redis);
    console.log(`${count} messages, ${history}:`, await measure(values.redis, count, keepDone));
    return;
  }
  const server = await startRedisServer();
  try {
    console.log(`${count} messages, ${history}:`, await measure(server.url, count, keepDone));
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
