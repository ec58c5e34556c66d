/**
 * Issue 17: classic LPUSH/BRPOP lists as producers. Items other programs push onto Redis lists
 * are moved into skyq by the launcher's intake and handled like any other message, on a
 * standalone server and on a 3-master cluster (where a list and its group live on different
 * nodes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Launcher, Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { itemsOf, lpushWithCli, percentile, readStarts } from './helpers/intake.js';
import { freshPrefix, plainClient, type Target, targetOf, waitFor } from './helpers/queue.js';
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from './helpers/redis.js';
import { FIXTURE_ENV, fixture, removeTempDirs, tempDir } from './helpers/runtime.js';

const GROUPS = 4;

describe.each([
  ['standalone', startStandalone],
  ['cluster', startCluster],
] as const)('intake on %s', (_, start) => {
  let handle: RedisServerHandle | RedisClusterHandle;
  let target: Target;
  let client: Redis | Cluster;
  let launcher: Launcher | null = null;
  let queue: Queue | null = null;

  beforeAll(async () => {
    handle = await start();
    target = targetOf(handle);
    client = plainClient(target);
    process.env[FIXTURE_ENV] = 'cluster' in target ? JSON.stringify(target.cluster) : target.redis;
  });
  afterEach(async () => {
    await launcher?.stop(2000);
    await queue?.close();
    launcher = null;
    queue = null;
    await client.del('starts');
  });
  afterAll(async () => {
    client?.disconnect();
    await handle?.stop();
    removeTempDirs();
  });

  const launch = (
    prefix: string,
    intake: NonNullable<Parameters<typeof startActors>[0]>['intake'],
    extra = {},
  ) =>
    startActors({
      ...target,
      prefix,
      groups: GROUPS,
      intake,
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
      ...extra,
    });

  it('10,000 items pushed before start: each once, in push order, high emptied before normal', async () => {
    const prefix = freshPrefix('in');
    const lists = { high: 4000, normal: 3000, low: 3000 };
    const names = Object.keys(lists).map((list) => `${prefix}:${list}`);
    const pushed = Object.entries(lists).map(([list, count]) => itemsOf(list, count));
    await Promise.all(names.map((name, i) => lpushWithCli(handle, name, pushed[i] as string[])));
    // One group and one priority: the group's order is then the order the intake added in.
    launcher = await launch(
      prefix,
      names.map((list) => ({ list, group: 1, priority: 0 })),
      { only: [1] },
    );
    const starts = await waitFor(
      '10,000 starts',
      async () => {
        const all = await readStarts(client);
        return all.length >= 10_000 ? all : undefined;
      },
      60_000,
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // any duplicate would show by now
    const seen = (await readStarts(client)).map((s) => s.body as string);
    expect(seen.length).toBe(10_000);
    expect(new Set(seen).size).toBe(10_000);
    // Handler start order: every high item in push order, then every normal one, then low.
    const order = [...starts].sort((a, b) => a.startedAt - b.startedAt).map((s) => s.body);
    expect(order).toEqual(pushed.flat());
    for (const name of names) expect(await client.llen(name)).toBe(0);
    const figures = (await launcher.stats()).intake ?? [];
    expect(figures.map((f) => [f.list, f.items, f.length])).toEqual(
      names.map((name, i) => [name, Object.values(lists)[i], 0]),
    );
  });

  it('an item pushed onto an idle list starts at once, not on a poll (p50 under 250 ms, p90 under 500)', async () => {
    const prefix = freshPrefix('in');
    const list = `${prefix}:idle`;
    // Not niced: beside other busy processes (CI runs three test files at once) a nice-10
    // actor gets a tenth of a nice-0 one's CPU share, and its starts wait for the core, not for
    // the intake (p90 370-456 ms beside four busy loops; 15 ms with the actors at nice 0).
    launcher = await launch(prefix, [list], { watchMs: 0, actorNice: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // idle: every blocker waits in Redis
    const pushedAt = new Map<string, number>();
    const writer = plainClient(target);
    try {
      for (const item of itemsOf('idle', 100)) {
        pushedAt.set(item, performance.timeOrigin + performance.now());
        await writer.lpush(list, item);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      writer.disconnect();
    }
    const starts = await waitFor('100 starts', async () => {
      const all = await readStarts(client);
      return all.length >= 100 ? all : undefined;
    });
    const waits = starts.map((s) => s.startedAt - (pushedAt.get(s.body as string) as number));
    const [p50, p90, p99] = [50, 90, 99].map((q) => percentile(waits, q)) as [
      number,
      number,
      number,
    ];
    console.log(
      `intake idle start: p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...waits).toFixed(1)} ms`,
    );
    // The guarantee is that an idle list is waited on in Redis, not polled: a loop that sleeps
    // 1 s when empty (the designs skyq replaces) starts items uniformly over that second, p50
    // ~500 ms and p90 ~900. Alone here p50 is ~5 ms and p90 6-15; the p99 of 100 starts is
    // the slowest one, which a loaded machine can push past any bound a poll would fail.
    expect(p50).toBeLessThan(250);
    expect(p90).toBeLessThan(500);
  });

  it('binary items keep their exact bytes; an over-size one is a dead letter with its bytes', async () => {
    const prefix = freshPrefix('in');
    const list = `${prefix}:bytes`;
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const invalid = Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x80]);
    const big = Buffer.alloc(100 * 1024 + 3, 0xc3); // invalid UTF-8, spilled to its own key
    const small = Buffer.from('x'.repeat(3000)); // over the limit, stored inline
    const writer = plainClient(target);
    await writer.lpush(list, every, big, invalid, small, 'after');
    writer.disconnect();
    launcher = await launch(prefix, [list], { maxBodyBytes: 2048 });
    queue = new Queue({ ...target, prefix, groups: GROUPS });
    const starts = await waitFor('3 starts', async () => {
      const all = await readStarts(client);
      return all.length >= 3 ? all : undefined;
    });
    expect(starts.map((s) => s.body)).toEqual([
      { hex: every.toString('hex') },
      { hex: invalid.toString('hex') },
      'after',
    ]);
    const dead = await waitFor('2 dead letters', async () => {
      const page = await (queue as Queue).deadLetters.list({ limit: 10 });
      return page.length >= 2 ? page : undefined;
    });
    const bodies = dead.map((d) => Buffer.from(d.body as string | Buffer));
    expect(bodies.map((b) => b.length).sort((a, b) => a - b)).toEqual([3000, big.length]);
    expect(bodies.some((b) => b.equals(big))).toBe(true);
    expect(bodies.some((b) => b.equals(small))).toBe(true);
    for (const d of dead) expect(d.reason).toMatch(/over maxBodyBytes \(2048\)/);
    expect(await client.llen(list)).toBe(0);
  });

  it('a key of the wrong type is shown and logged, and the other lists go on', async () => {
    const prefix = freshPrefix('in');
    const wrong = `${prefix}:wrong`;
    const good = `${prefix}:good`;
    await client.set(wrong, 'not a list');
    await client.lpush(good, 'fine');
    const logDir = tempDir();
    launcher = await launch(prefix, [wrong, good], { logDir });
    await waitFor('the good item', async () =>
      (await readStarts(client)).length ? true : undefined,
    );
    const figures = await waitFor('the wrong type shown', async () => {
      const all = (await (launcher as Launcher).stats()).intake ?? [];
      return all[0]?.error ? all : undefined;
    });
    expect(figures[0]?.error).toMatch(/WRONGTYPE/);
    expect(figures[0]?.length).toBeNull();
    expect(figures[1]).toMatchObject({ list: good, items: 1, error: null });
    // Met every second (the blocking read, the length read), logged once a minute.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const lines = readFileSync(join(logDir, 'intake.log'), 'utf8').trim().split('\n');
    const errors = lines
      .map((line) => JSON.parse(line) as { list?: string; err: string })
      .filter((l) => l.list === wrong);
    expect(errors.length).toBe(1);
    expect(errors[0]?.err).toMatch(/WRONGTYPE/);
  });
});
