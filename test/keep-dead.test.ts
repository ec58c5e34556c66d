// keepDead: dead letters' own retention, by count and by age, trimmed a bounded number per
// death; the default keeps them until purged; bad values in one line (library and CLI).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { Message, Queue } from '../src/index.js';
import { claimAtLeast, recordsIn, useQueueRedis } from './helpers/queue.js';
import { runCli } from './helpers/runtime.js';

const redis = useQueueRedis();

/** Adds `n` messages and fails each one dead, oldest first; returns their ids. */
async function killMany(q: Queue, n: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await q.add(i, { id: `${label}:${i}`, group: 0, attempts: 1 });
    const [m] = await claimAtLeast(q, 0, 1);
    await q.fail(m as Message, new Error(`boom ${i}`));
    ids.push(id);
  }
  return ids;
}

describe('keepDead', () => {
  it('keeps every dead letter by default', async () => {
    const q = await redis.queue({ groups: 1 });
    await killMany(q, 12, 'all');
    expect((await q.counts())[0]?.dead).toBe(12);
  });

  it('keeps the newest count, forgetting the rest with their records', async () => {
    const q = await redis.queue({ groups: 1, keepDead: { count: 3 } });
    const ids = await killMany(q, 6, 'count');
    expect((await q.counts())[0]?.dead).toBe(3);
    expect(await q.get(ids[0] as string)).toBeNull();
    expect(await q.get(ids[5] as string)).toMatchObject({ state: 'dead', lastError: 'boom 5' });
    expect(await recordsIn(redis.plain, keyOf(q.config.prefix, 0, 'msg'))).toBe(3);
    expect(await redis.plain.hlen(keyOf(q.config.prefix, 0, 'err'))).toBe(3);
  });

  it('forgets those older than ageMs when another dies', async () => {
    const q = await redis.queue({ groups: 1, keepDead: { ageMs: 300 } });
    const [old] = await killMany(q, 1, 'age-old');
    await sleep(400);
    const [fresh] = await killMany(q, 1, 'age-new');
    expect(await q.get(old as string)).toBeNull();
    expect((await q.get(fresh as string))?.state).toBe('dead');
  });

  it('trims at most 1 + 10 a death: no call walks a long dead-letter set', async () => {
    const keepAll = await redis.queue({ groups: 1 });
    await killMany(keepAll, 30, 'many');
    const { prefix } = keepAll.config;
    const q = await redis.queue({ groups: 1, prefix, keepDead: { count: 1 } });
    await killMany(q, 1, 'trigger');
    expect((await q.counts())[0]?.dead).toBe(31 - 11);
    await killMany(q, 2, 'more');
    expect((await q.counts())[0]?.dead).toBe(1);
  });

  it('refuses bad values in one line', async () => {
    await expect(redis.queue({ keepDead: { count: -1 } })).rejects.toThrow(
      /keepDead\.count: must be between 0 and/,
    );
    await expect(redis.queue({ keepDead: { days: 3 } as never })).rejects.toThrow(
      /days: keepDead\.: unknown option/,
    );
    const url = (redis.target as { redis: string }).redis;
    const out = await runCli(['start', '--keep-dead', 'lots', '--redis', url]);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')[0]).toBe(
      'skyq: keep-dead: must be <count>[,<age>], like 10000,24h (got "lots")',
    );
  });
});
