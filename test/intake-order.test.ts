/**
 * Issue 24 §2.4: `--intake high,normal,low` keeps `BRPOP high normal low` order. The lists of
 * one intake go to one group by default (the first list's), so an earlier list's items start
 * first; `list=group` still sends a list elsewhere, and the start line then says the order
 * holds only within a group. A launcher that adopts the holding list of one that ran the old
 * default (each list its own hashed group) adds those items where they were going: nothing
 * lost, nothing twice.
 */
import { describe, expect, it } from 'vitest';
import { hashString } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { entryOf, itemId, ownHolding, registryKeys } from '../src/queue/intake/holding.js';
import { startActors } from '../src/start.js';
import { itemsOf, lpushWithCli, readStarts } from './helpers/intake.js';
import { redisNow } from './helpers/queue.js';
import { fixture, spawnCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const GROUPS = 10;
const groupOf = (list: string) => hashString(list) % GROUPS;

describe('intake order between lists', () => {
  it('high, normal, low by default: every high item starts before any normal one, and normal before low', async () => {
    const lists = ['high', 'normal', 'low'];
    // The README's example: its names hash to different groups (5, 2, 5).
    expect(new Set(lists.map(groupOf)).size).toBeGreaterThan(1);
    await redis.client.del('starts');
    const pushed = [itemsOf('high', 300), itemsOf('normal', 100), itemsOf('low', 50)];
    await Promise.all(lists.map((list, i) => lpushWithCli(redis.server, list, pushed[i] ?? [])));
    const launcher = await startActors({
      redis: redis.server.url,
      prefix: 'iorder',
      groups: GROUPS,
      intake: lists,
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const starts = await waitFor('450 starts', async () => {
        const all = await readStarts(redis.client);
        return all.length >= 450 ? all : undefined;
      });
      // One group, one actor: the records are in start order, and that is BRPOP's order.
      expect(starts.map((s) => s.body)).toEqual(pushed.flat());
      expect(launcher.intake.map((spec) => [spec.list, spec.group, spec.priority])).toEqual([
        ['high', groupOf('high'), 0],
        ['normal', groupOf('high'), 1],
        ['low', groupOf('high'), 2],
      ]);
    } finally {
      await launcher.stop();
    }
  }, 60_000);

  it('on an idle intake, items pushed one by one onto normal all start before one pushed onto low after them', async () => {
    await redis.client.del('starts');
    const lists = ['idle:high', 'idle:normal', 'idle:low'];
    const launcher = await startActors({
      redis: redis.server.url,
      prefix: 'iidle',
      groups: GROUPS,
      intake: lists,
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      // Each list's own connection waits in BLMOVE. One LPUSH an item, pipelined (not MULTI):
      // the first normal item wakes normal's wait, and the low one arrives while normal still
      // holds most of its items, as BRPOP idle:high idle:normal idle:low would find them.
      for (let round = 0; round < 3; round++) {
        const normal = itemsOf(`normal${round}`, 300);
        const pipeline = redis.client.pipeline();
        for (const item of normal) pipeline.lpush('idle:normal', item);
        pipeline.lpush('idle:low', `low${round}`);
        await pipeline.exec();
        const starts = await waitFor(`round ${round}'s 301 starts`, async () => {
          const all = await readStarts(redis.client);
          return all.length >= 301 * (round + 1) ? all.slice(301 * round) : undefined;
        });
        expect(starts.map((s) => s.body)).toEqual([...normal, `low${round}`]);
      }
    } finally {
      await launcher.stop();
    }
  }, 60_000);

  it('items of an earlier list go first even when they were moved later', async () => {
    await redis.client.del('starts');
    const prefix = 'ilater';
    const lists = ['later:high', 'later:normal'];
    expect(groupOf(lists[0] as string)).not.toBe(groupOf(lists[1] as string));
    const queue = new Queue({ redis: redis.server.url, prefix, groups: GROUPS });
    await queue.ready();
    await queue.pause(); // every group: what the intake moves waits
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: GROUPS,
      intake: lists,
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const moved = (count: number) =>
        waitFor(`${count} moved`, async () => {
          const total = (await queue.counts()).reduce((sum, g) => sum + g.ready + g.delayed, 0);
          return total >= count ? true : undefined;
        });
      const normal = itemsOf('n', 40);
      const high = itemsOf('h', 20);
      await redis.client.lpush(lists[1] as string, ...normal);
      await moved(40);
      await redis.client.lpush(lists[0] as string, ...high);
      await moved(60);
      await queue.resume();
      const starts = await waitFor('60 starts', async () => {
        const all = await readStarts(redis.client);
        return all.length >= 60 ? all : undefined;
      });
      // As BRPOP later:high later:normal would take them now: high first, each in push order.
      expect(starts.map((s) => s.body)).toEqual([...high, ...normal]);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 60_000);

  it('the start line names the one group; with list=group it says order holds only within a group', async () => {
    // Waits for `count` intake lines: each is a write of its own, and a read between two of
    // them once saw the first three without the fourth.
    const startLines = async (intake: string, count: number) => {
      const run = spawnCli([
        'start',
        '--redis',
        redis.server.url,
        '--prefix',
        'iline',
        '--groups',
        String(GROUPS),
        '--intake',
        intake,
        '--log-dir',
        tempDir(),
      ]);
      try {
        return await waitFor(`${count} intake lines`, () => {
          const out = run.stdout();
          const lines = out
            .slice(0, out.lastIndexOf('\n')) // whole lines only
            .split('\n')
            .filter((line) => line.includes('intake'));
          return lines.length >= count ? lines : undefined;
        });
      } finally {
        run.child.kill('SIGTERM');
        await run.done;
      }
    };
    const one = groupOf('mail:high');
    expect(groupOf('mail:normal')).not.toBe(one);
    expect(await startLines('mail:high,mail:normal,mail:low', 3)).toEqual([
      `skyq: intake from list mail:high into group ${one} (priority 0)`,
      `skyq: intake from list mail:normal into group ${one} (priority 1)`,
      `skyq: intake from list mail:low into group ${one} (priority 2)`,
    ]);
    const other = (one + 1) % GROUPS;
    expect(await startLines(`mail:high,mail:normal=${other},mail:low`, 4)).toEqual([
      `skyq: intake from list mail:high into group ${one} (priority 0)`,
      `skyq: intake from list mail:normal into group ${other} (priority 1)`,
      `skyq: intake from list mail:low into group ${one} (priority 2)`,
      `skyq: intake lists go to groups ${one} and ${other}: an earlier list goes first only within a group`,
    ]);
  }, 60_000);

  it('a holding list left by a launcher on the old default is adopted into its old group: nothing lost, nothing twice', async () => {
    await redis.client.del('starts');
    const prefix = 'iupgrade';
    const list = 'orders:normal';
    const oldGroup = groupOf(list);
    const queue = new Queue({ redis: redis.server.url, prefix, groups: GROUPS });
    await queue.ready();
    // What a format-7 launcher (intake: ['orders:high', 'orders:normal']) left when killed:
    // its holding list for orders:normal, registered, its items going to the list's own group;
    // it had added the two oldest already (still pending) and not yet trimmed them.
    const old = ownHolding(prefix, 'old-launcher', {
      list,
      group: oldGroup,
      priority: 1,
      index: 1,
    });
    const items = itemsOf('held', 6);
    await redis.client.lpush(old.key, ...items);
    const keys = registryKeys(prefix);
    await redis.client.zadd(keys.alive, (await redisNow(redis.client)) - 60_000, old.owner);
    await redis.client.hset(keys.holding, old.key, entryOf(old));
    const runAt = (await redisNow(redis.client)) + 1500; // pending while it is adopted
    await queue.addBulk(
      items.slice(0, 2).map((body, i) => ({
        body,
        options: { id: itemId(old, i), group: oldGroup, priority: 1, runAt },
      })),
    );
    await redis.client.lpush(list, 'new:00000');
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: GROUPS,
      intake: ['orders:high', list],
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const starts = await waitFor('7 starts', async () => {
        const all = await readStarts(redis.client);
        return all.length >= 7 ? all : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would show by now
      const seen = await readStarts(redis.client);
      expect(seen.map((s) => s.body).sort()).toEqual([...items, 'new:00000'].sort());
      expect(seen.length).toBe(starts.length);
      // The adopted items went where they were going, under the ids their positions gave
      // them; the new one to the intake's one group (the first list's).
      for (const [i, body] of items.entries()) {
        const id = seen.find((s) => s.body === body)?.id as string;
        expect(id).toBe(itemId(old, i));
        expect((await queue.get(id))?.group).toBe(oldGroup);
      }
      const fresh = seen.find((s) => s.body === 'new:00000')?.id as string;
      expect((await queue.get(fresh))?.group).toBe(groupOf('orders:high'));
      expect(groupOf('orders:high')).not.toBe(oldGroup);
      expect(await redis.client.exists(old.key)).toBe(0);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 60_000);
});
