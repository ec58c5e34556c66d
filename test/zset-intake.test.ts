/**
 * Issue 28 §3: other programs' delay queues consumed where they lie. The third design's `seta`
 * (`ZADD seta <epoch ms> <member>`, here from redis-cli) is consumed by `zsetIntake`: every
 * member once, in score order, none before its score, with its score as its due time; binary
 * members keep their bytes; a key of the wrong type is shown and logged once a minute; two
 * launchers on one set never take the same member. On a standalone server and on a 3-master
 * cluster, where the set lives on another master than its group.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { type Launcher, Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { readStarts, type Start, zaddWithCli } from './helpers/intake.js';
import { freshPrefix, plainClient, redisNow, type Target, targetOf } from './helpers/queue.js';
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from './helpers/redis.js';
import { FIXTURE_ENV, fixture, removeTempDirs, tempDir, waitFor } from './helpers/runtime.js';

const GROUPS = 4;

describe.each([
  ['standalone', startStandalone],
  ['cluster', startCluster],
] as const)('sorted-set intake on %s', (_, start) => {
  let handle: RedisServerHandle | RedisClusterHandle;
  let target: Target;
  let client: Redis | Cluster;
  const launchers: Launcher[] = [];
  let queue: Queue | null = null;

  beforeAll(async () => {
    handle = await start();
    target = targetOf(handle);
    client = plainClient(target);
    await client.ping();
    process.env[FIXTURE_ENV] = 'cluster' in target ? JSON.stringify(target.cluster) : target.redis;
  });
  afterEach(async () => {
    for (const launcher of launchers.splice(0)) await launcher.stop(2000);
    await queue?.close();
    queue = null;
    await client.del('starts');
  });
  afterAll(async () => {
    client?.disconnect();
    await handle?.stop();
    removeTempDirs();
  });

  const launch = async (prefix: string, zsetIntake: unknown, extra = {}) => {
    const launcher = await startActors({
      ...target,
      prefix,
      groups: GROUPS,
      zsetIntake: zsetIntake as never,
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
      ...extra,
    });
    launchers.push(launcher);
    return launcher;
  };
  const startsAtLeast = (count: number, timeoutMs = 30_000) =>
    waitFor(
      `${count} starts`,
      async () => {
        const all = await readStarts(client);
        return all.length >= count ? all : undefined;
      },
      timeoutMs,
      50,
    );

  /** On a cluster: a group whose slot another master serves than the key's. */
  const groupAway = (prefix: string, key: string): number => {
    if (!('slots' in client)) return 1;
    const slots = (client as Cluster).slots;
    const master = (k: string) => slots[calculateSlot(k)]?.[0];
    const group = [0, 1, 2, 3].find((g) => master(keyOf(prefix, g, 'delayed')) !== master(key));
    expect(group).toBeDefined();
    return group as number;
  };

  it('seta from redis-cli (ms): each member once, in score order, none before its score, due at its score', async () => {
    const prefix = freshPrefix('zs');
    const key = `${prefix}:seta`;
    const group = groupAway(prefix, key);
    const now = await redisNow(client);
    // 300 due already (pushed in a shuffled order), 200 falling due over the next 1.5 s.
    const past = Array.from({ length: 300 }, (_, i) => [now - 5000 + i * 10, `p${i}`] as const);
    const shuffled = [...past].sort((a, b) => ((a[0] * 7919) % 300) - ((b[0] * 7919) % 300));
    await zaddWithCli(handle, key, shuffled as [number, string][]);
    const later = Array.from({ length: 200 }, (_, i) => [now + 500 + i * 5, `f${i}`] as const);
    await launch(prefix, [{ key, scoreUnit: 'ms', group }], { only: [group] });
    await zaddWithCli(handle, key, later as [number, string][]);
    const scores = new Map<string, number>([...past, ...later].map(([s, m]) => [m, s]));
    await startsAtLeast(500);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a duplicate would show by now
    const starts = await readStarts(client);
    const bodies = starts.map((s) => s.body as string);
    expect(new Set(bodies).size).toBe(500);
    expect(bodies.length).toBe(500);
    for (const s of starts) {
      const score = scores.get(s.body as string) as number;
      expect(s.dueAt).toBe(score);
      // Moved when due on Redis's clock; the handler reads the same system clock another way.
      expect(s.startedAt).toBeGreaterThanOrEqual(score - 2);
    }
    // One group and one actor: the records are in start order, and that is score order.
    expect(bodies.slice(0, 300)).toEqual(past.map(([, m]) => m));
    expect(bodies.slice(300)).toEqual(later.map(([, m]) => m));
    expect(await client.exists(key)).toBe(0);
    const late = starts.slice(300).map((s) => s.startedAt - s.dueAt);
    console.log(`seta ${_}: later members started ${Math.max(...late).toFixed(1)} ms late at most`);
  });

  it('binary members keep their exact bytes; an over-size one is a dead letter with its bytes', async () => {
    const prefix = freshPrefix('zs');
    const key = `${prefix}:bin`;
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const invalid = Buffer.from([0xff, 0x3a, 0x00, 0x0a, 0x80]); // a colon inside, too
    const big = Buffer.alloc(3000, 0xc3);
    const now = await redisNow(client);
    await client.zadd(key, now - 30, every, now - 20, invalid, now - 10, big, now, 'after');
    await launch(prefix, [{ key, scoreUnit: 'ms', group: 2 }], { maxBodyBytes: 2048 });
    queue = new Queue({ ...target, prefix, groups: GROUPS });
    const starts = await startsAtLeast(3);
    expect(starts.map((s: Start) => s.body)).toEqual([
      { hex: every.toString('hex') },
      { hex: invalid.toString('hex') },
      'after',
    ]);
    const dead = await waitFor('the dead letter', async () => {
      const page = await (queue as Queue).deadLetters.list({ limit: 10 });
      return page.length >= 1 ? page : undefined;
    });
    expect(Buffer.from(dead[0]?.body as Buffer).equals(big)).toBe(true);
    expect(dead[0]?.reason).toMatch(/sorted set .*bin.* 3000 bytes, over maxBodyBytes \(2048\)/);
  });

  it('a key of the wrong type is shown and logged once, and the other keys go on', async () => {
    const prefix = freshPrefix('zs');
    const wrong = `${prefix}:wrong`;
    const good = `${prefix}:good`;
    await client.lpush(wrong, 'a list, not a sorted set');
    await client.zadd(good, Math.floor((await redisNow(client)) / 1000), 'fine');
    const logDir = tempDir();
    const launcher = await launch(
      prefix,
      [
        { key: wrong, scoreUnit: 'ms' },
        { key: good, scoreUnit: 's' },
      ],
      { logDir },
    );
    await startsAtLeast(1);
    const figures = await waitFor('the wrong type shown', async () => {
      const all = (await launcher.stats()).intake ?? [];
      return all[0]?.error ? all : undefined;
    });
    expect(figures[0]).toMatchObject({ list: wrong, scoreUnit: 'ms', length: null });
    expect(figures[0]?.error).toMatch(/WRONGTYPE.*holds a list, not a zset/);
    expect(figures[1]).toMatchObject({ list: good, scoreUnit: 's', items: 1, error: null });
    // Tried every second, logged once a minute.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const lines = readFileSync(join(logDir, 'intake.log'), 'utf8').trim().split('\n');
    const errors = lines
      .map((line) => JSON.parse(line) as { zset?: string; err: string })
      .filter((l) => l.zset === wrong);
    expect(errors.length).toBe(1);
    expect(await client.llen(wrong)).toBe(1); // never touched
  });

  it('two launchers on one set: 4,000 members falling due over a second, each handled once', async () => {
    const prefix = freshPrefix('zs');
    const key = `${prefix}:shared`;
    const option = [{ key, scoreUnit: 'ms', group: 0 }];
    await Promise.all([launch(prefix, option), launch(prefix, option)]);
    const now = await redisNow(client);
    const members = Array.from({ length: 4000 }, (_, i) => [now + 300 + (i % 1000), `m${i}`]);
    await zaddWithCli(handle, key, members as [number, string][]);
    await startsAtLeast(4000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const bodies = (await readStarts(client)).map((s) => s.body as string);
    expect(bodies.length).toBe(4000);
    expect(new Set(bodies).size).toBe(4000);
    // Both took part: each launcher's ids carry its own holding list's prefix.
    const figures = await Promise.all(launchers.map(async (l) => (await l.stats()).intake ?? []));
    const moved = figures.map((f) => f[0]?.items ?? 0);
    console.log(`two launchers ${_}: moved ${moved.join(' + ')}`);
    expect(moved.reduce((a, b) => a + b, 0)).toBe(4000);
  });
});
