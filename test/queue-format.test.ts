/**
 * The data format: records written the old way (format 1: no tags, no format key; raw HSET and
 * ZADD exactly as the old add.lua and claim.lua left them, pending, leased and dead) are read and
 * consumed by today's code; `<prefix>:format` is raised to ours and a newer one is refused; an
 * unnamed message's record is byte for byte what format 1 stored; names are checked.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKeys, KEEP_FIELD } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { FORMAT_VERSION, formatKey } from '../src/queue/format.js';
import { freshPrefix, plainClient, redisNow } from './helpers/queue.js';
import type { RedisServerHandle } from './helpers/redis.js';
import { startStandalone } from './helpers/redis.js';

let server: RedisServerHandle;
let client: Redis;

beforeAll(async () => {
  server = await startStandalone();
  client = plainClient({ redis: server.url }) as Redis;
});
afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

const keysOf = (prefix: string, group: number) => {
  const [delayed, , active, dead, msg, due, pri, att, err, reason] = groupKeys(prefix, group);
  return { delayed, active, dead, msg, due, pri, att, err, reason } as Record<string, string>;
};

describe('format', () => {
  it('consumes pending, leased and dead messages written in format 1', async () => {
    const prefix = freshPrefix('old');
    const k = keysOf(prefix, 0);
    const now = await redisNow(client);
    const enq = (now - 60_000).toString(36);
    // Format 1 records, as the old add.lua stored them: header, kind letter, body.
    await client.hset(k.msg as string, {
      'order:1': `${enq}|0|3|e1000|j{"orderId":"1"}`,
      'order:2': `${enq}|5|3|f200-5000|shello`,
      'order:3': `${enq}|0|2|e1000|sleased`,
      'order:4': `${enq}|0|3|e1000|j{"dead":true}`,
    });
    await client.zadd(k.delayed as string, now - 1000, 'order:1', now - 500, 'order:2');
    await client.hset(k.pri as string, 'order:2', '5', KEEP_FIELD, '-'.repeat(80));
    // Leased by a consumer that died: its lease ran out a second ago.
    await client.zadd(k.active as string, now - 1000, 'order:3');
    await client.hset(k.due as string, 'order:3', `${now - 2000}/7.123`);
    await client.zadd(k.dead as string, now - 3000, 'order:4');
    await client.hset(k.reason as string, 'order:4', 'failed 3 of 3 attempts');
    await client.hset(k.att as string, 'order:4', '3');
    const queue = new Queue({ redis: server.url, prefix, groups: 1 });
    try {
      await queue.ready();
      expect(await client.get(formatKey(prefix))).toBe(String(FORMAT_VERSION));
      expect(await queue.get('order:2')).toMatchObject({
        state: 'ready',
        body: 'hello',
        priority: 5,
        name: undefined,
      });
      expect(await queue.get('order:4')).toMatchObject({ state: 'dead', body: { dead: true } });
      expect(await queue.deadLetters.retry()).toBe(1);
      const seen = new Map<string, unknown>();
      for (let round = 0; round < 5 && seen.size < 4; round++) {
        const messages = await queue.claim(0, 10, 30_000);
        for (const m of messages) seen.set(m.id, m.body);
        await queue.ack(messages);
      }
      expect(Object.fromEntries(seen)).toEqual({
        'order:1': { orderId: '1' },
        'order:2': 'hello',
        'order:3': 'leased',
        'order:4': { dead: true },
      });
      expect(await queue.counts()).toEqual([
        { group: 0, delayed: 0, ready: 0, active: 0, dead: 0, paused: false },
      ]);
    } finally {
      await queue.close();
    }
  });

  it('refuses data written in a newer format, and a key that holds no format', async () => {
    const prefix = freshPrefix('new');
    await client.set(formatKey(prefix), String(FORMAT_VERSION + 1));
    const queue = new Queue({ redis: server.url, prefix, groups: 1 });
    try {
      await expect(queue.ready()).rejects.toThrow(
        `a newer skyq (format ${FORMAT_VERSION + 1}, in ${prefix}:format) is running on this Redis; this skyq (format ${FORMAT_VERSION})`,
      );
      expect(await client.get(formatKey(prefix))).toBe(String(FORMAT_VERSION + 1));
      await client.set(formatKey(prefix), 'banana');
      await expect(queue.ready()).rejects.toThrow(/holds "banana", not a format number/);
    } finally {
      await queue.close();
    }
  });

  it('stores an unnamed record exactly as format 1 did; a named one carries its tag', async () => {
    const prefix = freshPrefix('rec');
    const queue = new Queue({ redis: server.url, prefix, groups: 1 });
    try {
      await queue.ready();
      const plain = await queue.add('x'.repeat(100));
      const named = await queue.add('x'.repeat(100), { name: 'e-mail.sénd' });
      const k = keysOf(prefix, 0);
      const plainRecord = (await client.hget(k.msg as string, plain)) as string;
      expect(plainRecord).toMatch(/^[0-9a-z]+\|0\|3\|e1000\|sx{100}$/);
      const namedRecord = (await client.hget(k.msg as string, named)) as string;
      const tag = `n${Buffer.byteLength('e-mail.sénd')}:e-mail.sénd`;
      const enqueued = /^[0-9a-z]+/; // each add's own time
      expect(namedRecord.replace(enqueued, '')).toBe(
        plainRecord.replace(enqueued, '').replace('|s', `|${tag}s`),
      );
      const [message] = await queue
        .claim(0, 10, 1000)
        .then((ms) => ms.filter((m) => m.id === named));
      expect(message?.name).toBe('e-mail.sénd');
    } finally {
      await queue.close();
    }
  });

  it('checks names: printable text up to 128 bytes', async () => {
    const queue = new Queue({ redis: server.url, prefix: freshPrefix('bad'), groups: 1 });
    try {
      await expect(queue.add('x', { name: '' })).rejects.toThrow(
        'name: must be a non-empty string',
      );
      await expect(queue.add('x', { name: 'a'.repeat(129) })).rejects.toThrow(
        'name: must be at most 128 bytes',
      );
      await expect(queue.add('x', { name: 'a\nb' })).rejects.toThrow(
        'name: must be printable text',
      );
      await expect(
        queue.addBulk([{ body: 1 }, { body: 2, options: { name: 42 as unknown as string } }]),
      ).rejects.toThrow('items[1].options.name: must be a non-empty string (got 42)');
      expect(await queue.counts()).toMatchObject([{ delayed: 0 }]);
      await expect(queue.add('x', { name: 'a'.repeat(128) })).resolves.toBeTypeOf('string');
    } finally {
      await queue.close();
    }
  });
});
