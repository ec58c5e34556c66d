/**
 * Spilled bodies and the keys around them (issue 13, items 1 and 6), on a real redis-server:
 * - no key holding a pending message ever carries an expiry, so a `volatile-*` eviction
 *   policy can never take one: MONITOR sees every command (scripts' own included) while
 *   messages are added, lost, retried, failed, dead, revived, claimed and acked;
 * - the bodies of failed adds do not linger: a refused add and an add whose bodies went out
 *   but whose add did not leave none, and one whose client died is swept after
 *   SPILL_ORPHAN_MS by the group's next add or claim; an add that arrives after that finds
 *   its body gone and stores nothing;
 * - records written by the previous format (a stub without an attempt) still work.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { AddBulkError } from '../src/index.js';
import { prepareMessage } from '../src/queue/add-options.js';
import { headerOf } from '../src/queue/record.js';
import {
  bodyKey,
  nextAttempt,
  SPILL_BYTES,
  SPILL_ORPHAN_MS,
  storeSpills,
} from '../src/queue/spill.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const big = (tag: string) => `${tag}:${'b'.repeat(SPILL_BYTES + 10)}`;

const bodyKeys = (prefix: string) => redis.plain.keys(`{${prefix}:0}:body:*`);

/** Commands that can give a key an expiry. */
const EXPIRING = /^(expire|pexpire|expireat|pexpireat|setex|psetex|getex|restore)$/i;
const setsExpiry = (args: string[]) => {
  const [name = '', ...rest] = args;
  if (EXPIRING.test(name)) return true;
  return /^set$/i.test(name) && rest.some((a) => /^(ex|px|exat|pxat|keepttl)$/i.test(a));
};

describe('keys holding messages', () => {
  it('never get an expiry, through adds, lost replies, retries, dead letters and revives', async () => {
    const queue = await redis.queue({ groups: 1, attempts: 1 });
    const prefix = queue.config.prefix;
    const seen: string[][] = [];
    const monitor = (await redis.plain.monitor()) as unknown as Redis;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((a) => a.includes(prefix))) seen.push(args);
    });
    try {
      const ids = await queue.addBulk([
        { body: 'small' },
        { body: big('spilled'), options: { delay: 72 * 3_600_000 } },
        { body: big('caller'), options: { id: 'order:9' } },
        { body: Buffer.alloc(SPILL_BYTES * 3, 1), options: { priority: 5 } },
      ]);
      // The same add sent again (a lost reply resent), then a caller id that dies and is
      // added again (revived), then dead letters put back to work.
      const again = prepareMessage(queue.config, big('resent'), { group: 0 });
      const attempt = nextAttempt(again.spill as never);
      const spills = keyOf(prefix, 0, 'spills');
      const args = ['1', '', '1', '0', '0', '1', '', '0', '0:zz1', '', attempt.stub];
      args.push('1', String(again.spill?.bytes), attempt.nonce);
      for (let round = 0; round < 2; round++) {
        await storeSpills(queue.client, prefix, 0, spills, [attempt], Date.now());
        await queue.run('add', 0, args);
      }
      const claimed = await queue.claim(0, 10);
      const caller = claimed.find((m) => m.id === 'order:9');
      expect(await queue.fail(caller as never, 'no')).toBe('dead');
      expect(await queue.add(big('caller again'), { id: 'order:9' })).toBe('order:9');
      await queue.ack(claimed.filter((m) => m.id !== 'order:9'));
      const [revived] = await queue.claim(0, 10);
      expect(revived?.id).toBe('order:9');
      expect(await queue.fail(revived as never, 'no')).toBe('dead');
      expect(await queue.deadLetters.retry()).toBe(1);
      expect(ids).toHaveLength(4);
      // Every key of the prefix is kept for good.
      const keys = await redis.plain.keys(`*${prefix}*`);
      const ttls = await Promise.all(keys.map(async (k) => [k, await redis.plain.pttl(k)]));
      expect(ttls.filter(([, ttl]) => ttl !== -1)).toEqual([]);
      expect((await bodyKeys(prefix)).length).toBe(2); // the 72 h one and order:9's
    } finally {
      monitor.disconnect();
    }
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter(setsExpiry)).toEqual([]);
  });
});

describe('bodies of failed adds', () => {
  it('go at once when Redis refuses the add', async () => {
    const queue = await redis.queue({ groups: 1 });
    const prefix = queue.config.prefix;
    await redis.plain.set(`${prefix}:0`, 'not a zset'); // add.lua refuses: WRONGTYPE
    const error = await queue.addBulk([{ body: big('refused') }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AddBulkError);
    expect(String((error as Error).message)).toMatch(/WRONGTYPE/);
    expect(await bodyKeys(prefix)).toEqual([]);
    expect(await redis.plain.exists(keyOf(prefix, 0, 'spills'))).toBe(0);
  });

  it('of an add whose client died after writing them go after SPILL_ORPHAN_MS', async () => {
    const queue = await redis.queue({ groups: 1 });
    const prefix = queue.config.prefix;
    const spills = keyOf(prefix, 0, 'spills');
    const old = prepareMessage(queue.config, big('orphan'), { group: 0 });
    const fresh = prepareMessage(queue.config, big('recent'), { group: 0 });
    const orphan = nextAttempt(old.spill as never);
    const recent = nextAttempt(fresh.spill as never);
    // What a producer killed between its bodies and its add leaves: an hour and more ago,
    // and just now (that one's add may still come).
    await storeSpills(
      queue.client,
      prefix,
      0,
      spills,
      [orphan],
      Date.now() - SPILL_ORPHAN_MS - 5000,
    );
    await storeSpills(queue.client, prefix, 0, spills, [recent], Date.now());
    expect((await bodyKeys(prefix)).length).toBe(2);
    await queue.claim(0, 10); // any claim (or add) of the group sweeps
    expect(await bodyKeys(prefix)).toEqual([bodyKey(prefix, 0, recent.nonce)]);
    expect(await redis.plain.zrange(spills, 0, -1)).toEqual([recent.nonce]);
    // The late add of the swept one fails, naming why, and stores nothing.
    const args = ['1', '', '1', '0', '0', '1', '', '0', '0:late1', '', orphan.stub];
    args.push('1', String(old.spill?.bytes), orphan.nonce);
    await expect(queue.run('add', 0, args)).rejects.toThrow(
      /body key .* is gone .* nothing was added/,
    );
    expect(await queue.get('0:late1')).toBeNull();
    // The recent one's add comes: its body is kept, and no longer listed.
    const kept = ['1', '', '1', '0', '0', '1', '', '0', '0:late2', '', recent.stub];
    kept.push('1', String(fresh.spill?.bytes), recent.nonce);
    await queue.run('add', 0, kept);
    expect((await queue.get('0:late2'))?.body).toBe(big('recent'));
    expect(await redis.plain.exists(spills)).toBe(0);
  });
});

describe('a spilled record of the previous format', () => {
  it('(a stub without an attempt, its body key written with an expiry) is claimed whole and cleaned up', async () => {
    const queue = await redis.queue({ groups: 1 });
    const prefix = queue.config.prefix;
    // Exactly what the previous main stored for a spilled add: a 12-character nonce.
    const header = headerOf({
      enqueuedAt: Date.now(),
      priority: 0,
      maxAttempts: 3,
      backoff: queue.config.backoff,
    });
    const record = `${header}s${big('old format')}`;
    const nonce = 'AbCdEfGhIjKl';
    await redis.plain.set(bodyKey(prefix, 0, nonce), record, 'PX', 86_400_000);
    await redis.plain.persist(bodyKey(prefix, 0, nonce)); // the old add.lua made it permanent
    await redis.plain.hset(keyOf(prefix, 0, 'msg'), '0:old1', `${header}x${nonce}`);
    await redis.plain.hset(keyOf(prefix, 0, 'big'), '0:old1', `${record.length}/${nonce}`);
    await redis.plain.zadd(`${prefix}:0`, Date.now() - 1, '0:old1');
    expect((await queue.get('0:old1'))?.body).toBe(big('old format'));
    const [message] = await queue.claim(0, 10);
    expect({ id: message?.id, whole: message?.body === big('old format') }).toEqual({
      id: '0:old1',
      whole: true,
    });
    await queue.ack([message as never]);
    expect(await bodyKeys(prefix)).toEqual([]);
  });
});
