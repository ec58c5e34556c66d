import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Message, Queue, ScoreUnit } from '../src/index.js';
import { recordsIn, redisNow, useQueueRedis, waitFor } from './helpers/queue.js';

const redis = useQueueRedis();

const total = async (q: Queue) =>
  (await q.counts()).reduce((sum, c) => sum + c.delayed + c.ready + c.active + c.dead, 0);

describe('idempotent add with a caller id', () => {
  it('keeps one message while it is pending, whatever its state', async () => {
    const q = await redis.queue();
    expect(await q.add('first', { id: 'order-1', delay: 60_000 })).toBe('order-1');
    expect(await q.add('second', { id: 'order-1' })).toBe('order-1');
    expect(await total(q)).toBe(1);
    expect(await q.get('order-1')).toMatchObject({ state: 'delayed', body: 'first' });

    const ids = await q.addBulk([
      { body: 'a', options: { id: 'order-2' } },
      { body: 'b', options: { id: 'order-2' } },
      { body: 'c', options: { id: 'order-3' } },
    ]);
    expect(ids).toEqual(['order-2', 'order-2', 'order-3']);
    expect(await total(q)).toBe(3);
    const group = (await q.get('order-2'))?.group as number;
    expect((await q.get('order-2'))?.body).toBe('a');

    // Active: re-adding neither duplicates it nor takes it away from its consumer.
    const claimed = await q.claim(group, 10);
    expect(claimed.map((m) => m.id)).toContain('order-2');
    expect(await q.add('again', { id: 'order-2' })).toBe('order-2');
    expect(await q.get('order-2')).toMatchObject({ state: 'active', body: 'a' });
    expect(await q.claim(group, 10)).toEqual([]);
    expect(await q.ack(claimed.filter((m) => m.id === 'order-2'))).toBe(1);

    // Done and forgotten: the same id is a new message.
    expect(await q.add('new life', { id: 'order-2' })).toBe('order-2');
    expect(await q.get('order-2')).toMatchObject({ state: 'ready', body: 'new life', attempts: 0 });
  });

  it('revives a dead letter when its id is added again', async () => {
    const q = await redis.queue();
    const id = await q.add({ v: 1 }, { id: 'invoice-9', attempts: 1 });
    const group = (await q.get(id))?.group as number;
    const [first] = await q.claim(group);
    expect(first?.id).toBe(id);
    expect(await q.fail(first as Message, 'payment service down')).toBe('dead');
    expect((await q.get(id))?.state).toBe('dead');

    expect(await q.add({ v: 2 }, { id: 'invoice-9', priority: 3 })).toBe(id);
    expect(await q.get(id)).toMatchObject({
      state: 'ready',
      body: { v: 2 },
      priority: 3,
      attempts: 0,
      lastError: null,
      deadReason: null,
    });
    expect((await q.counts())[group]).toMatchObject({ ready: 1, dead: 0 });
    expect(await q.deadLetters.list()).toEqual([]);
    const [m] = await q.claim(group);
    expect(m).toMatchObject({ id, body: { v: 2 }, attempts: 1 });
  });
});

describe('raw members added by a redis.plain client', () => {
  it('claims a member of task_group:3 with its text as the body', async () => {
    const q = await redis.queue({ prefix: 'task_group' });
    expect(keyOf('task_group', 3, 'delayed')).toBe('task_group:3');
    await redis.plain.zadd('task_group:3', await redisNow(redis.plain), 'task:42:hello');
    const [m] = await q.claim(3);
    expect(m).toMatchObject({
      id: 'task:42:hello',
      group: 3,
      body: 'task:42:hello',
      attempts: 1,
      maxAttempts: 3,
      priority: 0,
      enqueuedAt: null,
    });
    expect(await q.ack([m as Message])).toBe(1);
    expect(await total(q)).toBe(0);
    // Kept in the history (keepDone) with its header-only record, the body being the member.
    expect(await q.get('task:42:hello')).toMatchObject({ state: 'done', body: 'task:42:hello' });
    expect(await recordsIn(redis.plain, keyOf('task_group', 3, 'msg'))).toBe(1);
  });

  it('retries and dead-letters a raw member like any other message', async () => {
    const q = await redis.queue({ attempts: 2, backoff: { type: 'fixed', delay: 0 } });
    await redis.plain.zadd(keyOf(q.config.prefix, 0, 'delayed'), 0, 'raw-job');
    expect(await q.get('raw-job')).toMatchObject({ state: 'ready', body: 'raw-job', group: 0 });
    const [raw] = await q.claim(0);
    expect(await q.fail(raw as Message, 'x')).toBe('retry');
    const [again] = await waitFor('the retry', async () => {
      const got = await q.claim(0);
      return got.length ? got : undefined;
    });
    expect(again).toMatchObject({ id: 'raw-job', body: 'raw-job', attempts: 2 });
    expect(await q.fail(again as Message, 'y')).toBe('dead');
    expect((await q.deadLetters.list())[0]).toMatchObject({
      id: 'raw-job',
      body: 'raw-job',
      lastError: 'y',
    });
  });

  const units: [ScoreUnit, number, number][] = [
    // unit, ms per score unit, how many units ahead the member is scored
    ['s', 1000, 3],
    ['cs', 10, 150],
  ];
  it.each(units)(
    "with scoreUnit '%s' a member is due at the time its score says",
    async (scoreUnit, unitMs, ahead) => {
      const q = await redis.queue({ scoreUnit });
      const key = keyOf(q.config.prefix, 6, 'delayed');
      const score = Math.floor((await redisNow(redis.plain)) / unitMs) + ahead;
      const dueMs = score * unitMs;
      await redis.plain.zadd(key, score, `tick:${scoreUnit}`);

      expect(await q.get(`tick:${scoreUnit}`)).toMatchObject({ state: 'delayed', dueAt: dueMs });
      const early = await q.poll(6);
      expect(early.now).toBeLessThan(dueMs);
      expect(early.messages).toEqual([]);
      expect(early.nextDueAt).toBe(dueMs);

      const delivered = await waitFor('the member to fall due', async () => {
        const result = await q.poll(6);
        return result.messages.length ? result : undefined;
      });
      expect(delivered.now).toBeGreaterThanOrEqual(dueMs);
      expect(delivered.messages).toMatchObject([
        { id: `tick:${scoreUnit}`, body: `tick:${scoreUnit}`, dueAt: dueMs },
      ]);

      // skyq's own adds write scores in the same unit, so redis.plain readers see them right. The
      // producer works out due times on its estimate of the Redis clock: the midpoint of the
      // fastest of a few TIME round trips, so off by up to half of one. That is under a
      // millisecond on an idle machine but tens of them on two loaded cores: allow 50 ms (a unit
      // mistake is off by 60 s or more, 60_000 × a unit's factor).
      const slack = 50;
      const before = await redisNow(redis.plain);
      const id = await q.add('mine', { group: 6, delay: 60_000 });
      const after = await redisNow(redis.plain);
      const stored = Number(await redis.plain.zscore(key, id));
      expect(stored).toBeGreaterThanOrEqual((before + 60_000 - slack) / unitMs);
      expect(stored).toBeLessThanOrEqual((after + 60_000 + slack) / unitMs);
    },
  );
});
