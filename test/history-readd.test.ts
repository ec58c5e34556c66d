// A finished id added again is a new message: get, waitFor and list tell of the new run only,
// and a cancel of it leaves nothing of the old one behind (issue 24, 2.5). Real redis-server.
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Queue } from '../src/index.js';
import { claimAtLeast, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

async function finish(q: Queue, result: unknown): Promise<void> {
  const [m] = await claimAtLeast(q, 0, 1);
  if (!m) throw new Error('nothing claimed');
  m.result = result;
  await q.ack([m]);
}

async function doneIds(q: Queue): Promise<string[]> {
  return (await q.list('done', { limit: 500 })).items.map((item) => item.id);
}

describe('a finished caller id added again', () => {
  it('reads as the new message while pending, and a cancel leaves no done entry', async () => {
    const q = await redis.queue({ groups: 1 });
    await q.add('first run', { id: 'order:7' });
    await finish(q, 'paid');
    expect(await q.get('order:7')).toMatchObject({ state: 'done', result: 'paid' });

    expect(await q.add('second run', { id: 'order:7', delay: 60_000 })).toBe('order:7');
    const pending = await q.get('order:7');
    expect(pending).toMatchObject({ state: 'delayed', body: 'second run' });
    expect(pending?.result).toBeUndefined();
    expect(pending?.finishedAt).toBeUndefined();
    expect(await doneIds(q)).not.toContain('order:7');
    expect((await q.listCounts()).done).toBe(0);
    // A waitFor started now waits for the new run, not the old result.
    await expect(q.waitFor('order:7', { timeoutMs: 300 })).rejects.toThrow(/did not finish/);

    expect(await q.cancel('order:7')).toBe(true);
    expect(await q.get('order:7')).toBeNull();
    expect(await doneIds(q)).not.toContain('order:7');
    await expect(q.waitFor('order:7', { timeoutMs: 300 })).rejects.toThrow(/no message order:7/);
    const hist = keyOf(q.config.prefix, 0, 'hist');
    expect(await redis.plain.hexists(hist, 'order:7')).toBe(0);
  });

  it('when it runs again, keeps only the new run: one done entry, the new body and result', async () => {
    const q = await redis.queue({ groups: 1 });
    await q.add('first run', { id: 'order:8' });
    await finish(q, 'first result');
    await q.add('second run', { id: 'order:8' });
    await finish(q, 'second result');
    expect(await q.get('order:8')).toMatchObject({
      state: 'done',
      body: 'second run',
      result: 'second result',
    });
    expect(await q.waitFor('order:8')).toEqual({ state: 'done', result: 'second result' });
    const page = await q.list('done');
    expect(page.items.filter((item) => item.id === 'order:8')).toHaveLength(1);
    expect(page.items[0]?.preview).toBe('second run');
  });

  it('a finished member another program ZADDs again is not listed done while pending', async () => {
    const q = await redis.queue({ groups: 1 });
    const delayed = keyOf(q.config.prefix, 0, 'delayed');
    await redis.plain.zadd(delayed, 0, 'raw-job');
    await finish(q, 'once');
    expect(await q.get('raw-job')).toMatchObject({ state: 'done', result: 'once' });

    await redis.plain.zadd(delayed, Date.now() + 60_000, 'raw-job');
    expect((await q.get('raw-job'))?.state).toBe('delayed');
    expect(await doneIds(q)).not.toContain('raw-job');
    expect(await q.cancel('raw-job')).toBe(true);
    expect(await q.get('raw-job')).toBeNull();
    expect(await doneIds(q)).not.toContain('raw-job');
  });
});
