// queue.waitFor: a job that ended before the call or after it, a timeout, many waiters on one
// reader per group, a 3-master cluster, and a Redis restart while waiting. Real redis-server.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type Message, Queue } from '../src/index.js';
import { claimAtLeast, freshPrefix, openQueue, useQueueRedis, waitFor } from './helpers/queue.js';
import {
  expectServedBy,
  heldPort,
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from './helpers/redis.js';
import { removeTempDirs, tempDir } from './helpers/runtime.js';

const redis = useQueueRedis();

async function finish(q: Queue, group: number, result: unknown): Promise<Message> {
  const [m] = await claimAtLeast(q, group, 1);
  (m as Message).result = result;
  await q.ack([m as Message]);
  return m as Message;
}

/** Connections on the server named like ours (the readers are duplicates of the queue's). */
async function clients(plain: Redis, name: string): Promise<number> {
  const list = (await plain.client('LIST')) as string;
  return list.split('\n').filter((line) => line.includes(`name=${name} `)).length;
}

describe('waitFor', () => {
  it('resolves a job that finished before the call, with its result', async () => {
    const q = await redis.queue();
    const id = await q.add('early', { group: 1 });
    await finish(q, 1, { total: 3 });
    expect(await q.waitFor(id)).toEqual({ state: 'done', result: { total: 3 } });
  });

  it('resolves a job that finishes after the call; dead ones with their error', async () => {
    const q = await redis.queue({ attempts: 1 });
    const id = await q.add('late', { group: 2 });
    const bad = await q.add('bad', { group: 2 });
    const waiting = q.waitFor(id, { timeoutMs: 10_000 });
    const dying = q.waitFor(bad, { timeoutMs: 10_000 });
    await sleep(100);
    const got = await claimAtLeast(q, 2, 2);
    const good = got.find((m) => m.id === id) as Message;
    good.result = 'fine';
    await q.ack([good]);
    await q.fail(got.find((m) => m.id === bad) as Message, new Error('card declined'));
    expect(await waiting).toEqual({ state: 'done', result: 'fine' });
    expect(await dying).toEqual({ state: 'dead', error: 'card declined' });
  });

  it('rejects with a clear error after timeoutMs, and for an unknown id', async () => {
    const q = await redis.queue();
    const id = await q.add('never done', { delay: 60_000 });
    const started = Date.now();
    await expect(q.waitFor(id, { timeoutMs: 300 })).rejects.toThrow(
      `waitFor ${id}: the job did not finish within 300 ms`,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(q.waitFor('no-such-job')).rejects.toThrow(/no message no-such-job/);
    await expect(q.waitFor(id, { timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
  });

  it('serves 2,000 waiters over 4 groups with 4 reader connections and no polling', async () => {
    // The 500 waiters of a group that one ack ends stop their reader once: each stop used to
    // disconnect it again, and ioredis's listener per disconnect made Node warn of a leak.
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', warned);
    onTestFinished(() => {
      process.off('warning', warned);
    });
    const name = `waiters${process.pid}`;
    const q = await redis.queue({ connectionName: name, groups: 4 });
    const ids = await q.addBulk(
      Array.from({ length: 2000 }, (_, i) => ({ body: i, options: { group: i % 4 } })),
    );
    const all = Promise.all(ids.map((id) => q.waitFor(id, { timeoutMs: 60_000 })));
    await waitFor('a reader per group', async () =>
      (await clients(redis.plain, name)) === 1 + 4 ? true : undefined,
    );
    // Every waiter's first look at its job done: the command count settles.
    const processed = async () =>
      Number(/total_commands_processed:(\d+)/.exec(await redis.plain.info('stats'))?.[1]);
    let before = await processed();
    await waitFor('the first looks to end', async () => {
      await sleep(300);
      const now = await processed();
      const settled = now - before < 20;
      before = now;
      return settled ? true : undefined;
    });
    // While they wait, the readers block in XREAD: a handful of commands, not one per waiter.
    before = await processed();
    await sleep(1000);
    const after = await processed();
    expect(after - before).toBeLessThan(50);
    for (let g = 0; g < 4; g++) {
      const got = await claimAtLeast(q, g, 500);
      for (const m of got) m.result = m.body;
      await q.ack(got);
    }
    const results = await all;
    expect(results.map((r) => (r.state === 'done' ? r.result : null))).toEqual(
      ids.map((_, i) => i),
    );
    await sleep(100);
    expect(await clients(redis.plain, name)).toBe(1); // readers go when nobody waits
    expect(warnings).toEqual([]);
  });

  it('waits on through a Redis restart', async () => {
    const port = await heldPort();
    const dir = tempDir('skyq-wait-');
    let server: RedisServerHandle = await startStandalone({ port, dir, appendonly: true });
    const q = await openQueue({ redis: server.url });
    try {
      const id = await q.add('across', { group: 0 });
      const waiting = q.waitFor(id, { timeoutMs: 30_000 });
      await sleep(200);
      await server.stop();
      await sleep(1000);
      server = await startStandalone({ port, dir, appendonly: true });
      await expectServedBy(server.url, server.pid);
      await finish(q, 0, 'after the restart');
      expect(await waiting).toEqual({ state: 'done', result: 'after the restart' });
    } finally {
      await q.close();
      await server.stop();
      removeTempDirs();
    }
  }, 60_000);
});

describe('waitFor on a 3-master cluster', () => {
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it('resolves waiters on every group, each group on its own master', async () => {
    const q = new Queue({ cluster: cluster.nodes, prefix: freshPrefix('wc') });
    await q.ready();
    try {
      const ids = await q.addBulk(
        Array.from({ length: 100 }, (_, i) => ({ body: i, options: { group: i % 10 } })),
      );
      const early = ids.slice(0, 10);
      for (let g = 0; g < 10; g++) await finish(q, g, `early ${g}`);
      const all = Promise.all(ids.map((id) => q.waitFor(id, { timeoutMs: 30_000 })));
      await sleep(200);
      for (let g = 0; g < 10; g++) {
        const got = await claimAtLeast(q, g, 9);
        for (const m of got) m.result = m.body;
        await q.ack(got);
      }
      const results = await all;
      expect(results.slice(0, 10).map((r) => r.state === 'done' && r.result)).toEqual(
        early.map((_, g) => `early ${g}`),
      );
      expect(results.slice(10).map((r) => r.state === 'done' && r.result)).toEqual(
        ids.slice(10).map((_, i) => i + 10),
      );
    } finally {
      await q.close();
    }
  }, 60_000);
});
