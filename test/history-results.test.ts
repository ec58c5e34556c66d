// Finished jobs are kept with their results (keepDone), trimmed by count and by age a bounded
// number a call, and get() tells what a kept job did. Real redis-server, no mocks.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { SPILL_BYTES } from '../src/queue/spill.js';
import { claimAtLeast, recordsIn, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

describe('history with results', () => {
  it('keeps the result of a done job: JSON, string, bytes, none, and truncated past the limit', async () => {
    const q = await redis.queue({ resultMaxBytes: 1000 });
    const ids = await q.addBulk(
      ['json', 'text', 'bytes', 'none', 'big'].map((body) => ({ body, options: { group: 0 } })),
    );
    const got = await claimAtLeast(q, 0, 5);
    const results: Record<string, unknown> = {
      json: { total: 42, items: ['a', 'b'] },
      text: 'shipped',
      bytes: Buffer.from([0, 255, 7]),
      none: undefined,
      big: 'x'.repeat(5000),
    };
    for (const message of got) {
      message.result = results[message.body as string];
      message.durationMs = 12;
    }
    expect(await q.ack(got)).toBe(5);
    const [json, text, bytes, none, big] = await Promise.all(ids.map((id) => q.get(id)));
    expect(json).toMatchObject({
      state: 'done',
      attempts: 1,
      durationMs: 12,
      result: results.json,
    });
    expect(json?.finishedAt).toBeGreaterThan(Date.now() - 60_000);
    expect(json?.body).toBe('json');
    expect(text?.result).toBe('shipped');
    expect(bytes?.result).toEqual(Buffer.from([0, 255, 7]));
    expect(none).toMatchObject({ state: 'done', resultKept: 'none' });
    expect(none?.result).toBeUndefined();
    expect(big).toMatchObject({ state: 'done', resultKept: 'truncated', resultBytes: 5000 });
    expect(big?.result).toBeUndefined();
  });

  it('counts the attempts a done job took', async () => {
    const q = await redis.queue({ backoff: { type: 'fixed', delay: 0 } });
    const id = await q.add('flaky', { group: 1 });
    const [first] = await claimAtLeast(q, 1, 1);
    expect(await q.fail(first as never, new Error('try again'))).toBe('retry');
    const [second] = await claimAtLeast(q, 1, 1);
    (second as { result: unknown }).result = 'ok';
    await q.ack([second as never]);
    expect(await q.get(id)).toMatchObject({ state: 'done', attempts: 2, result: 'ok' });
  });

  it('keepDone: false keeps nothing, as before', async () => {
    const q = await redis.queue({ keepDone: false });
    const id = await q.add('gone', { group: 0 });
    const got = await claimAtLeast(q, 0, 1);
    await q.ack(got);
    expect(await q.get(id)).toBeNull();
    expect(await recordsIn(redis.plain, keyOf(q.config.prefix, 0, 'msg'))).toBe(0);
  });

  it('trims by count: the newest stay, the records of the trimmed ones go', async () => {
    const q = await redis.queue({ keepDone: { count: 20, ageMs: 0 } });
    const ids = await q.addBulk(
      Array.from({ length: 50 }, (_, i) => ({ body: i, options: { group: 2 } })),
    );
    for (let i = 0; i < 50; i += 10) {
      const got = await claimAtLeast(q, 2, 10);
      await q.ack(got);
    }
    const doneKey = keyOf(q.config.prefix, 2, 'done');
    expect(await redis.plain.zcard(doneKey)).toBe(20);
    expect(await redis.plain.hlen(keyOf(q.config.prefix, 2, 'hist'))).toBe(21); // + KEEP_FIELD
    expect(await recordsIn(redis.plain, keyOf(q.config.prefix, 2, 'msg'))).toBe(20);
    expect(await q.get(ids[29] as string)).toBeNull();
    expect((await q.get(ids[30] as string))?.state).toBe('done');
  });

  it('trims by age, and get() hides an entry past its age before the trimming reaches it', async () => {
    const q = await redis.queue({ keepDone: { count: 1000, ageMs: 300 } });
    const [old] = await q.addBulk([{ body: 'old', options: { group: 3 } }]);
    await q.ack(await claimAtLeast(q, 3, 1));
    expect((await q.get(old as string))?.state).toBe('done');
    await sleep(400);
    expect(await q.get(old as string)).toBeNull();
    // The next ack trims it.
    await q.add('new', { group: 3 });
    await q.ack(await claimAtLeast(q, 3, 1));
    expect(await redis.plain.zcard(keyOf(q.config.prefix, 3, 'done'))).toBe(1);
    expect(await recordsIn(redis.plain, keyOf(q.config.prefix, 3, 'msg'))).toBe(1);
  });

  it('trims a bounded number per call: shrinking the count from 500 to 10 takes many calls', async () => {
    const prefix = `shrink${process.pid}`;
    const wide = await redis.queue({ prefix, keepDone: { count: 500, ageMs: 0 } });
    await wide.addBulk(Array.from({ length: 300 }, (_, i) => ({ body: i, options: { group: 4 } })));
    await wide.ack(await claimAtLeast(wide, 4, 300));
    const doneKey = keyOf(prefix, 4, 'done');
    expect(await redis.plain.zcard(doneKey)).toBe(300);
    const narrow = await redis.queue({ prefix, keepDone: { count: 10, ageMs: 0 } });
    await narrow.add('one', { group: 4 });
    await narrow.ack(await claimAtLeast(narrow, 4, 1));
    // Two calls (the claim, which acked nothing, and the ack of one): each removes its batch and
    // at most 10 more, never the 290 extra at once.
    expect(await redis.plain.zcard(doneKey)).toBe(301 - 10 - 11);
  });

  it('does not keep a body over 64 KiB, and a re-added id keeps its record when trimmed', async () => {
    const q = await redis.queue({ groups: 1, keepDone: { count: 1, ageMs: 0 } });
    const body = 'b'.repeat(SPILL_BYTES + 10);
    const [big] = await q.addBulk([{ body, options: { id: 'big-one', priority: 7 } }]);
    const bodyKeys = () => redis.plain.keys(`{${q.config.prefix}:0}:body:*`);
    expect(await bodyKeys()).toHaveLength(1);
    const [leased] = await claimAtLeast(q, 0, 1);
    (leased as { result: unknown }).result = 'fine';
    await q.ack([leased as never]);
    // 1,000 kept jobs of 1 MiB would be a GiB a group: the body goes, the rest is kept.
    expect(await q.get(big as string)).toMatchObject({
      state: 'done',
      body: null,
      bodyKept: false,
      priority: 7,
      result: 'fine',
    });
    expect(await bodyKeys()).toHaveLength(0);
    expect(await redis.plain.hlen(keyOf(q.config.prefix, 0, 'big'))).toBeLessThanOrEqual(1);
    // Added again while its history is kept: the new message owns the record from now on.
    await q.add('again', { id: 'big-one' });
    await q.add('pusher', { id: 'pusher', delay: 0 });
    const got = await claimAtLeast(q, 0, 2);
    const pusher = got.filter((m) => m.id === 'pusher');
    await q.ack(pusher); // trims 'big-one''s entry; its record is pending again, so it stays
    const again = got.find((m) => m.id === 'big-one');
    expect(again?.body).toBe('again');
    await q.ack([again as never]);
    await q.add('pusher2', { id: 'pusher2' });
    await q.ack(await claimAtLeast(q, 0, 1));
    expect(await q.get('big-one')).toBeNull();
    expect(await recordsIn(redis.plain, keyOf(q.config.prefix, 0, 'msg'))).toBe(1);
  });

  it('lists a done job whose big body was not kept as such, never its stub; a dead one keeps it', async () => {
    const q = await redis.queue({ groups: 1, attempts: 1 });
    const [done, dead] = await q.addBulk([
      { body: 'd'.repeat(SPILL_BYTES + 10), options: { id: 'big-done' } },
      { body: 'e'.repeat(SPILL_BYTES + 10), options: { id: 'big-dead' } },
    ]);
    const [waiting] = (await q.list('ready', { prefix: 'big-done' })).items;
    expect(waiting).toMatchObject({ preview: 'd'.repeat(300), truncated: true });
    expect(waiting?.bodyKept).toBeUndefined();
    const got = await claimAtLeast(q, 0, 2);
    await q.ack(got.filter((m) => m.id === done));
    expect(await q.fail(got.find((m) => m.id === dead) as never, new Error('no'))).toBe('dead');
    // The stub's nonce is stored where the body was: it is no body, and says nothing to a reader.
    const [kept] = (await q.list('done')).items;
    expect(kept).toMatchObject({ id: done, preview: '', truncated: false, bodyKept: false });
    const [letter] = (await q.list('dead')).items;
    expect(letter).toMatchObject({ id: dead, preview: 'e'.repeat(300), truncated: true });
    expect(letter?.bodyKept).toBeUndefined();
  });
});
