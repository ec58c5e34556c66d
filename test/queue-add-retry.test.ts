/**
 * An add whose reply is lost, sent again with AddBulkError.retry(): review defects of issue 13
 * (items 5.1, 5.2, 5.4), each on a real redis-server behind the cut-reply proxy, with a
 * producer whose client hands the loss to the caller (autoResendUnfulfilledCommands off, as a
 * user's own client may be) instead of resending.
 * - a spilled caller-id add, claimed, failed and dead before its retry, keeps its body;
 * - a retry never gives the body key of a message already stored an expiry;
 * - a retried add renamed after an id counter went back returns its own id, not the id's
 *   present holder's, and is stored once.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { AddBulkError, Queue } from '../src/index.js';
import { SPILL_BYTES } from '../src/queue/spill.js';
import { type CutProxy, startCutProxy } from './faults/helpers/cut-proxy.js';
import { freshPrefix } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';

const big = (tag: string) => `${tag}:${'b'.repeat(SPILL_BYTES * 2)}`;

let server: RedisServerHandle;
let plain: Redis;
const opened: { close(): unknown }[] = [];

beforeAll(async () => {
  server = await startStandalone();
  plain = new Redis(server.url);
});
afterAll(async () => {
  for (const thing of opened.reverse()) await thing.close();
  plain.disconnect();
  await server.stop();
});

/** A producer through a fresh cut proxy, and a consumer straight on the server, one prefix. */
async function pair(options: { attempts?: number } = {}) {
  const proxy: CutProxy = await startCutProxy(server.port);
  opened.push(proxy);
  const prefix = freshPrefix('ar');
  // A client that fails the commands of a connection that died (as the caller then sees
  // them) instead of resending them once it reconnects.
  const client = new Redis(proxy.url, { maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  opened.push({ close: () => client.disconnect() });
  const producer = new Queue({ connection: client, prefix, groups: 1, ...options });
  const consumer = new Queue({ redis: server.url, prefix, groups: 1, ...options });
  opened.push(consumer);
  await Promise.all([producer.ready(), consumer.ready()]);
  return { proxy, producer, consumer, prefix };
}

/**
 * The add's AddBulkError, its reply to the add.lua call (or to `command`) lost on the way.
 * `skip`: script calls to let through first (1 when the add reserves generated ids).
 */
async function lostAdd(
  proxy: CutProxy,
  client: Redis,
  add: () => Promise<unknown>,
  command = 'eval',
  skip = 0,
): Promise<AddBulkError> {
  proxy.cutReplyTo(command, 0, skip);
  const error = await add().then(
    () => null,
    (e: unknown) => e,
  );
  expect(proxy.cuts()).toBeGreaterThan(0);
  expect(error).toBeInstanceOf(AddBulkError);
  await client.ping(); // connected again (and its handshake done) before anything else is cut
  return error as AddBulkError;
}

/** Every body key of the prefix's group 0, with its time to live (-1: none). */
async function bodyKeys(prefix: string): Promise<Map<string, number>> {
  const keys = await plain.keys(`{${prefix}:0}:body:*`);
  return new Map(await Promise.all(keys.map(async (k) => [k, await plain.pttl(k)] as const)));
}

describe('AddBulkError.retry() after a lost reply', () => {
  it('keeps the body of a spilled caller-id add that was claimed, failed and died meanwhile', async () => {
    const { proxy, producer, consumer } = await pair({ attempts: 1 });
    const body = big('order:77');
    const lost = await lostAdd(proxy, producer.client as Redis, () =>
      producer.addBulk([{ body, options: { id: 'order:77' } }]),
    );
    // The add went in: a consumer has it, fails it, and it dies.
    const [message] = await consumer.claim(0, 10);
    expect(message?.body).toBe(body);
    expect(await consumer.fail(message as never, new Error('card declined'))).toBe('dead');
    expect(await lost.retry()).toEqual(['order:77']);
    // The dead letter is replaced by the retried add, whole.
    const info = await consumer.get('order:77');
    expect({ state: info?.state, body: info?.body === body }).toEqual({
      state: 'ready',
      body: true,
    });
    const [again] = await consumer.claim(0, 10);
    expect({ id: again?.id, body: again?.body === body }).toEqual({ id: 'order:77', body: true });
    expect(await consumer.deadLetters.list()).toEqual([]);
    await consumer.ack([again as never]);
    expect((await bodyKeys(consumer.config.prefix)).size).toBe(0);
  });

  it('gives no expiry to the body key of a message already stored, even when the retry fails', async () => {
    const { proxy, producer, consumer, prefix } = await pair();
    const body = big('due in two days');
    const runAt = Date.now() + 48 * 3_600_000;
    const lost = await lostAdd(
      proxy,
      producer.client as Redis,
      () => producer.addBulk([{ body, options: { runAt } }]),
      'eval',
      1,
    );
    // The retry's bodies go out, their reply is lost, and the retry fails before its add.
    // ('set\r\n': SET itself, not CLIENT SETNAME or SETINFO)
    const failed = await lostAdd(proxy, producer.client as Redis, () => lost.retry(), 'set\r\n');
    const stored = await consumer.client.zrange(keyOf(prefix, 0, 'delayed'), 0, -1);
    expect(stored).toHaveLength(1);
    const keys = await bodyKeys(prefix);
    // Only the stored message's body is left, and nothing will expire it.
    expect([...keys.values()]).toEqual([-1]);
    expect((await consumer.get(stored[0] as string))?.body === body).toBe(true);
    // A last retry finds the message there and stores nothing more.
    const ids = await failed.retry();
    expect(ids).toEqual(stored);
    expect(await consumer.client.zcard(keyOf(prefix, 0, 'delayed'))).toBe(1);
    expect([...(await bodyKeys(prefix)).values()]).toEqual([-1]);
  });

  it('of an add renamed after the id counter went back returns its own id, stored once', async () => {
    const { proxy, producer, consumer, prefix } = await pair();
    // The counter ran ahead of Redis's clock (a burst), so going back stays above its floor.
    const ahead = String(36 ** 10);
    await plain.set(keyOf(prefix, 0, 'seq'), ahead);
    const first = await consumer.add('message A', { delay: 3_600_000 });
    // The counter goes back (a failover to a lagging replica, an older AOF): the producer's
    // next id is one given already, so add.lua stores its message under a fresh one.
    await plain.set(keyOf(prefix, 0, 'seq'), ahead);
    const lost = await lostAdd(
      proxy,
      producer.client as Redis,
      () => producer.addBulk([{ body: 'message B', options: { delay: 3_600_000 } }]),
      'eval',
      1,
    );
    const [id] = await lost.retry();
    expect(id).not.toBe(first);
    expect((await consumer.get(id as string))?.body).toBe('message B');
    const stored = await consumer.client.zrange(keyOf(prefix, 0, 'delayed'), 0, -1);
    expect(stored.sort()).toEqual([first, id].sort());
    // Cancelling what the retry returned cancels B, never A.
    expect(await consumer.cancel(id as string)).toBe(true);
    expect((await consumer.get(first))?.body).toBe('message A');
  });
});
