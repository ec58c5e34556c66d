// The same queue on a standalone server and on a 3-master Redis Cluster.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KEY_NAMES } from '../src/base/keys.js';
import { groupKeys, type Message, Queue } from '../src/index.js';
import { claimAtLeast, openQueue, type Target, targetOf } from './helpers/queue.js';
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from './helpers/redis.js';

const GROUPS = 10;

describe.each([
  ['standalone', startStandalone],
  ['cluster', startCluster],
] as const)('on %s', (_, start) => {
  let handle: RedisServerHandle | RedisClusterHandle;
  let target: Target;
  let q: Queue;

  beforeAll(async () => {
    handle = await start();
    target = targetOf(handle);
  });
  // One server (a cluster takes seconds to form), and a prefix of its own for each test: the
  // counts and dead-letter lists below see only what that test made.
  beforeEach(async () => {
    q = await openQueue(target);
  });
  afterEach(async () => {
    await q?.close();
  });

  afterAll(async () => {
    await handle?.stop();
  });

  it('adds, claims and acks in every group', async () => {
    const items = Array.from({ length: GROUPS * 3 }, (_, i) => ({
      body: { i },
      options: { group: i % GROUPS, delay: i < GROUPS ? 150 : 0, priority: i < GROUPS ? 0 : 1 },
    }));
    const ids = await q.addBulk(items);
    const named = await q.add('named', { id: 'order-77', group: 7 });
    expect(named).toBe('order-77');
    expect((await q.get('order-77'))?.group).toBe(7); // found even outside its home group

    for (let group = 0; group < GROUPS; group++) {
      const wanted = ids.filter((_, i) => i % GROUPS === group);
      const got = await claimAtLeast(q, group, wanted.length + (group === 7 ? 1 : 0));
      const mine = got.filter((m) => m.id !== 'order-77');
      expect(mine.map((m) => m.id).sort()).toEqual(wanted.sort());
      expect(mine.filter((m) => m.priority === 1).map((m) => m.body)).toEqual([
        { i: group + 10 },
        { i: group + 20 },
      ]);
      expect(mine.map((m) => m.group)).toEqual(wanted.map(() => group));
      expect(await q.ack(got)).toBe(got.length);
    }
    const counts = await q.counts();
    expect(counts.filter((c) => c.delayed || c.ready || c.active || c.dead)).toEqual([]);
  });

  it('spills records over 64 KiB beside their group, on its slot', async () => {
    const big = 'z'.repeat(100 * 1024);
    const ids = await q.addBulk(
      Array.from({ length: GROUPS }, (_, g) => ({ body: `${g}${big}`, options: { group: g } })),
    );
    for (const [g, id] of ids.entries()) {
      expect((await q.get(id))?.body).toBe(`${g}${big}`);
      const [m] = await claimAtLeast(q, g, 1);
      expect([m?.id, m?.body]).toEqual([id, `${g}${big}`]);
      expect(await q.ack([m as Message])).toBe(1);
    }
  });

  it('cancels, reschedules and dead-letters in any group', async () => {
    const ids = await q.addBulk(
      Array.from({ length: GROUPS }, (_, g) => ({
        body: g,
        options: { group: g, delay: 60_000, attempts: 1 },
      })),
    );
    for (const [g, id] of ids.entries()) {
      if (g % 2) expect(await q.cancel(id)).toBe(true);
      else expect(await q.reschedule(id, { delay: 0 })).toBe(true);
    }
    for (let g = 0; g < GROUPS; g += 2) {
      const [m] = await claimAtLeast(q, g, 1);
      expect(m?.id).toBe(ids[g]);
      expect(await q.fail(m as Message, `group ${g} failed`)).toBe('dead');
    }
    const letters = await q.deadLetters.list();
    expect(letters.map((l) => l.body).sort()).toEqual([0, 2, 4, 6, 8]);
    expect(await q.deadLetters.purge()).toBe(5);
    expect((await q.counts()).reduce((s, c) => s + c.delayed + c.ready + c.dead, 0)).toBe(0);
  });
});

describe('cluster key layout', () => {
  let cluster: RedisClusterHandle;
  let q: Queue;
  const admin: Redis[] = [];

  beforeAll(async () => {
    cluster = await startCluster();
    q = await openQueue({ cluster: cluster.nodes }, { prefix: 'task_group' });
    for (const node of cluster.nodes) admin.push(new Redis({ ...node, lazyConnect: true }));
  });

  afterAll(async () => {
    for (const c of admin) c.disconnect();
    await q?.close();
    await cluster?.stop();
  });

  it('keeps each group in one slot, different groups in different slots, over several masters', async () => {
    const node = admin[0] as Redis;
    const slotOf = async (key: string) => Number(await node.call('CLUSTER', 'KEYSLOT', key));
    const groupSlots: number[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const keys = groupKeys('task_group', g);
      expect(keys[0]).toBe(`task_group:${g}`);
      expect(keys).toHaveLength(KEY_NAMES.length);
      const slots = new Set(await Promise.all(keys.map(slotOf)));
      expect(slots.size, `group ${g}: ${keys.join(' ')}`).toBe(1);
      groupSlots.push([...slots][0] as number);
    }
    expect(new Set(groupSlots).size).toBe(GROUPS);

    // Who owns each slot, from CLUSTER SLOTS: the groups must be spread over more than one master.
    const ranges = (await node.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const ownerOf = (slot: number) =>
      ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
    const owners = new Set(groupSlots.map(ownerOf));
    expect(owners.has(undefined)).toBe(false);
    expect(owners.size).toBeGreaterThan(1);

    // And the data really lands there: each master holds exactly the groups its slots cover.
    await q.addBulk(Array.from({ length: GROUPS }, (_, g) => ({ body: g, options: { group: g } })));
    for (const [i, master] of admin.entries()) {
      const held = (await master.keys('*task_group*')).sort();
      const expected = groupSlots
        .map((slot, g) => (ownerOf(slot) === cluster.nodes[i]?.port ? g : -1))
        .filter((g) => g >= 0)
        // Due now and of priority 0: they wait in the delayed set (the plain name).
        .flatMap((g) => [
          `task_group:${g}`,
          `{task_group:${g}}:msg`,
          `{task_group:${g}}:seq`,
          `{task_group:${g}}:format`, // each slot's copy of the format (format 8)
        ]);
      // (task_group:format and the rate limits' and intake's copies live wherever they hash.)
      const ofGroups = held.filter(
        (k) => !/^(task_group:format|\{task_group:(rate|intake)\}:format)$/.test(k),
      );
      expect(ofGroups.filter((k) => !k.endsWith(':due') && !k.endsWith(':wake'))).toEqual(
        expected.sort(),
      );
    }
  });

  it('runs every script on every master from its first call, with nothing loaded beforehand', async () => {
    for (const master of admin) await master.script('FLUSH');
    // A brand-new client: ready() must wait for the cluster topology, not find no masters yet.
    const fresh = new Queue({ cluster: cluster.nodes, prefix: 'fresh' });
    try {
      await fresh.ready();
      const groups = Array.from({ length: fresh.config.groups }, (_, g) => g);
      await fresh.addBulk(groups.map((group) => ({ body: group, options: { group } })));
      for (const group of groups) {
        const [message] = await fresh.claim(group, 10);
        expect(message?.body).toBe(group);
        expect(await fresh.ack([message as NonNullable<typeof message>])).toBe(1);
      }
      for (const master of admin) {
        expect(await master.info('commandstats')).not.toMatch(/cmdstat_script\|load:/);
      }
    } finally {
      await fresh.close();
    }
  });
});
