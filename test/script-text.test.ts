/**
 * Script text goes to Redis only with a script's first call on a connection (ioredis sends that
 * one as EVAL), so `ready()` loads nothing beforehand: it once sent all 36 scripts (~1.8 MB) with
 * SCRIPT LOAD, which every connection then sent again as its first EVAL anyway. What must hold:
 * a fresh server runs everything on first use, and a server that forgot its scripts (restarted,
 * or SCRIPT FLUSH) runs them again through the same Queue.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';

let server: RedisServerHandle;
let admin: Redis;
const queues: Queue[] = [];

beforeAll(async () => {
  server = await startStandalone();
  admin = new Redis(server.url);
});
afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close()));
  admin?.disconnect();
  await server?.stop();
});

const queueOf = () => {
  const queue = new Queue({ redis: server.url, prefix: freshPrefix('text'), groups: 2 });
  queues.push(queue);
  return queue;
};

async function figures() {
  const [commands, stats] = [await admin.info('commandstats'), await admin.info('stats')];
  const calls = (name: string) =>
    Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(commands)?.[1] ?? 0);
  return {
    loads: calls('script\\|load'),
    inputBytes: Number(/total_net_input_bytes:(\d+)/.exec(stats)?.[1]),
  };
}

/** Adds one message due now to group 1, claims it and acks it: add, id-block, claim, ack. */
async function roundTrip(queue: Queue, body: string): Promise<void> {
  await queue.add(body, { group: 1 });
  const [message] = await queue.claim(1, 10);
  expect(message?.body).toBe(body);
  expect(await queue.ack([message as NonNullable<typeof message>])).toBe(1);
}

it('ready() sends no script text: nothing is loaded before a script is run', async () => {
  await admin.config('RESETSTAT');
  const before = await figures();
  await queueOf().ready();
  const after = await figures();
  expect(after.loads).toBe(0);
  // The format check's one script is all ready() runs (~70 KB); all 36 scripts were ~1.8 MB.
  expect(after.inputBytes - before.inputBytes).toBeLessThan(200_000);
});

it('a fresh server runs each script on its first call, and again after it forgot them', async () => {
  await admin.script('FLUSH');
  const queue = queueOf();
  await queue.ready();
  await roundTrip(queue, 'first');
  // As after a restart without the scripts: the Queue's next calls meet NOSCRIPT and resend.
  await admin.script('FLUSH');
  await roundTrip(queue, 'again');
  expect((await figures()).loads).toBe(0);
});
