/**
 * The core engine's raw rates, on a private redis-server (never a shared one):
 *   (a) addBulk: N messages with 100-byte bodies, in calls of 10,000, each due 0..5 s from now;
 *   (b) claim + ack: N ready messages spread over 10 groups, drained by 10 claimers (one Queue
 *       and one connection each, one group each) looping poll({ max: 200, ack: previous ids }).
 * Run: npm run build && node dist/bench/engine.js [--count N] [--json]
 */
import { parseArgs } from 'node:util';
import { type Message, Queue } from '../src/index.js';
import { startRedisServer } from '../src/redis/server.js';

const GROUPS = 10;
const ADD_CALL = 10_000;
const BODY_BYTES = 100;
const MAX_DELAY_MS = 5_000;
const POLL_MAX = 200;

export interface EngineResult {
  messages: number;
  addSeconds: number;
  addRate: number;
  drainSeconds: number;
  drainRate: number;
  redisVersion: string;
}

const body = (i: number) => `${i}:`.padEnd(BODY_BYTES, 'x');

async function measureAdd(url: string, count: number): Promise<number> {
  const queue = new Queue({ redis: url, prefix: 'bench_add' });
  try {
    await queue.ready();
    const started = performance.now();
    for (let start = 0; start < count; start += ADD_CALL) {
      const size = Math.min(ADD_CALL, count - start);
      const items = Array.from({ length: size }, (_, i) => ({
        body: body(start + i),
        options: { delay: Math.floor(Math.random() * MAX_DELAY_MS) },
      }));
      await queue.addBulk(items);
    }
    const seconds = (performance.now() - started) / 1000;
    const counts = await queue.counts();
    const stored = counts.reduce((sum, c) => sum + c.delayed + c.ready, 0);
    if (stored !== count) throw new Error(`addBulk stored ${stored} of ${count} messages`);
    return seconds;
  } finally {
    await queue.close();
  }
}

/** One claimer: its own connection, its own group, acks riding on the next poll. */
async function drainGroup(queue: Queue, group: number, expected: number): Promise<Set<string>> {
  const seen = new Set<string>();
  let ack: Message[] = [];
  while (seen.size < expected || ack.length > 0) {
    const result = await queue.poll(group, { max: POLL_MAX, leaseMs: 60_000, ack });
    ack = result.messages;
    for (const message of ack) seen.add(message.id);
    if (result.messages.length === 0 && seen.size < expected) {
      throw new Error(`group ${group}: nothing to claim after ${seen.size} of ${expected}`);
    }
  }
  return seen;
}

async function measureDrain(url: string, count: number): Promise<number> {
  const prefix = 'bench_drain';
  const producer = new Queue({ redis: url, prefix });
  const claimers = Array.from({ length: GROUPS }, () => new Queue({ redis: url, prefix }));
  try {
    await Promise.all([producer, ...claimers].map((q) => q.ready()));
    const perGroup = Array.from(
      { length: GROUPS },
      (_, g) => Math.floor(count / GROUPS) + (g < count % GROUPS ? 1 : 0),
    );
    for (let start = 0; start < count; start += ADD_CALL) {
      const size = Math.min(ADD_CALL, count - start);
      await producer.addBulk(
        Array.from({ length: size }, (_, i) => ({
          body: body(start + i),
          options: { group: (start + i) % GROUPS },
        })),
      );
    }
    const started = performance.now();
    const delivered = await Promise.all(
      claimers.map((q, g) => drainGroup(q, g, perGroup[g] as number)),
    );
    const seconds = (performance.now() - started) / 1000;
    const total = delivered.reduce((sum, ids) => sum + ids.size, 0);
    const left = (await producer.counts()).reduce(
      (s, c) => s + c.delayed + c.ready + c.active + c.dead,
      0,
    );
    if (total !== count || left !== 0)
      throw new Error(`drained ${total} of ${count}, ${left} left over`);
    return seconds;
  } finally {
    await Promise.all([producer, ...claimers].map((q) => q.close()));
  }
}

export async function runEngineBench(count: number): Promise<EngineResult> {
  const server = await startRedisServer();
  try {
    const admin = new Queue({ redis: server.url, prefix: 'bench_admin' });
    const info = (await admin.client.info('server')) as string;
    await admin.close();
    const addSeconds = await measureAdd(server.url, count);
    const drainSeconds = await measureDrain(server.url, count);
    return {
      messages: count,
      addSeconds,
      addRate: count / addSeconds,
      drainSeconds,
      drainRate: count / drainSeconds,
      redisVersion: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    };
  } finally {
    await server.stop();
  }
}

function table(r: EngineResult): string {
  const n = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  const rows: [string, string, string][] = [
    ['figure', 'messages/s', 'seconds'],
    [
      `addBulk (calls of ${n.format(ADD_CALL)}, due 0..5 s)`,
      n.format(r.addRate),
      r.addSeconds.toFixed(2),
    ],
    [
      `claim+ack (${GROUPS} claimers, max ${POLL_MAX})`,
      n.format(r.drainRate),
      r.drainSeconds.toFixed(2),
    ],
  ];
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((row) => row[c]?.length ?? 0)));
  const line = (row: string[]) =>
    row
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join('  ');
  const head = `skyq engine, ${n.format(r.messages)} messages of ${BODY_BYTES} bytes, redis ${r.redisVersion}`;
  return [head, line(rows[0] as string[]), ...rows.slice(1).map(line)].join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '200000' },
      json: { type: 'boolean', default: false },
    },
  });
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < GROUPS)
    throw new Error(`--count must be an integer ≥ ${GROUPS}`);
  const result = await runEngineBench(count);
  console.log(values.json ? JSON.stringify(result) : table(result));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
