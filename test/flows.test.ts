/**
 * README, Flows: a parent waits (state `waiting`, listed by list('waiting')) until every child
 * has ended, then runs once with `job.children` in the order given; a mandatory child's death
 * makes its parent dead ("child <id> failed: <reason>") up to the root; an optional one's does
 * not; a dead optional child retried while its parent waits replaces its entry when done;
 * get() shows a parent's children by state and a child's parent. Driven with the queue's own
 * claim / ack / fail, on a real Redis.
 */
import { describe, expect, it } from 'vitest';
import type { FlowIds, Message, Queue } from '../src/index.js';
import { claimAtLeast, useQueueRedis, waitFor } from './helpers/queue.js';

const redis = useQueueRedis();

/** Claims from `group` until the ids wanted are all leased (others are acked on the way). */
async function claimIds(queue: Queue, group: number, ids: string[]): Promise<Message[]> {
  const got = await claimAtLeast(queue, group, ids.length);
  expect(got.map((m) => m.id).sort()).toEqual([...ids].sort());
  return got;
}

describe('flows in one group', () => {
  it('the parent waits, then runs once with its children in order', async () => {
    const q = await redis.queue({ groups: 2 });
    const flow = await q.flows.add({
      body: { step: 'report' },
      name: 'report',
      options: { group: 1 },
      children: [{ body: 'a', name: 'fetch' }, { body: 'b' }, { body: { n: 3 }, name: 'fetch' }],
    });
    const [a, b, c] = flow.children.map((child) => child.id) as [string, string, string];
    expect(flow.children.every((child) => child.children.length === 0)).toBe(true);
    const parent = await q.get(flow.id);
    expect(parent?.state).toBe('waiting');
    expect(parent?.children).toMatchObject({ total: 3, ready: 3, done: 0 });
    expect((await q.get(a))?.parent).toEqual({ id: flow.id, group: 1, optional: false });
    const waiting = await q.list('waiting');
    expect(waiting.items.map((item) => item.id)).toEqual([flow.id]);
    expect((await q.listCounts()).waiting).toBe(1);

    const jobs = await claimIds(q, 1, [a, b, c]);
    for (const job of jobs) job.result = `${JSON.stringify(job.body)}!`;
    // One result over resultMaxBytes (64 KiB): the parent learns it was cut, and its size.
    const big = jobs.find((job) => job.id === c) as Message;
    big.result = 'x'.repeat(70_000);
    // Two of three: the parent still waits.
    await q.ack(jobs.filter((job) => job.id !== b));
    expect((await q.get(flow.id))?.children).toMatchObject({ active: 1, done: 2 });
    expect(await q.claim(1, 10)).toEqual([]);
    await q.ack(jobs.filter((job) => job.id === b));
    const [job] = await claimIds(q, 1, [flow.id]);
    expect(job?.childCount).toBe(3);
    const children = await q.flows.children(job as Message);
    expect(
      children.map((child) => [child.id, child.name, child.state, child.result, child.resultKept]),
    ).toEqual([
      [a, 'fetch', 'done', '"a"!', 'value'],
      [b, undefined, 'done', '"b"!', 'value'],
      [c, 'fetch', 'done', undefined, 'truncated'],
    ]);
    expect(children[2]?.resultBytes).toBe(70_000);
    await q.ack([job as Message]);
    expect((await q.get(flow.id))?.state).toBe('done');
    expect(await q.claim(1, 10)).toEqual([]);
  });

  it("a mandatory child's death makes its parent dead, up to the root", async () => {
    const q = await redis.queue({ groups: 1 });
    const flow = await q.flows.add({
      body: 'root',
      children: [
        { body: 'mid', children: [{ body: 'leaf-ok' }, { body: 'leaf-bad' }] },
        { body: 'sibling' },
      ],
    });
    const mid = flow.children[0] as { id: string; children: { id: string }[] };
    const [ok, bad] = mid.children.map((child) => child.id) as [string, string];
    const jobs = await claimAtLeast(q, 0, 3);
    await q.ack(jobs.filter((job) => job.id === ok));
    const failing = jobs.find((job) => job.id === bad) as Message;
    expect(await q.fail(failing, new Error('boom'), { retry: false })).toBe('dead');
    const midInfo = await q.get(mid.id);
    expect(midInfo?.state).toBe('dead');
    expect(midInfo?.deadReason).toBe(`child ${bad} failed: boom`);
    const root = await q.get(flow.id);
    expect(root?.state).toBe('dead');
    expect(root?.deadReason).toBe(`child ${mid.id} failed: child ${bad} failed: boom`);
    // The sibling still runs; its end finds the root no longer waiting.
    await q.ack(jobs.filter((job) => job.id === flow.children[1]?.id));
    expect((await q.listCounts()).waiting).toBe(0);
    expect(await q.claim(0, 10)).toEqual([]);
  });

  it('an optional child may die; retried while its parent waits, its success counts', async () => {
    const q = await redis.queue({ groups: 1 });
    const flow = await q.flows.add({
      body: 'parent',
      children: [
        { body: 'maybe', optional: true },
        { body: 'later', options: { delay: 60_000 } },
        { body: 'other', optional: true },
      ],
    });
    const [maybe, later, other] = flow.children.map((child) => child.id) as [
      string,
      string,
      string,
    ];
    const jobs = await claimIds(q, 0, [maybe, other]);
    for (const job of jobs) await q.fail(job, new Error('flaky'), { retry: false });
    let info = await q.get(flow.id);
    expect(info?.state).toBe('waiting');
    expect(info?.children).toMatchObject({ total: 3, dead: 2, delayed: 1 });
    // One dead optional child comes back and succeeds while the parent still waits.
    expect(await q.deadLetters.retry({ ids: [maybe] })).toBe(1);
    const [again] = await claimIds(q, 0, [maybe]);
    (again as Message).result = 'second time';
    await q.ack([again as Message]);
    info = await q.get(flow.id);
    expect(info?.children).toMatchObject({ done: 1, dead: 1, delayed: 1 });
    // The last child is brought forward: the parent runs, with the other one dead.
    await q.reschedule(later, { delay: 0 });
    const [late] = await claimIds(q, 0, [later]);
    await q.ack([late as Message]);
    const [parent] = await claimIds(q, 0, [flow.id]);
    const children = await q.flows.children(parent as Message);
    expect(children.map((child) => [child.id, child.state, child.result, child.error])).toEqual([
      [maybe, 'done', 'second time', undefined],
      [later, 'done', undefined, undefined],
      [other, 'dead', undefined, 'flaky'],
    ]);
  });

  it("a plain add of a waiting parent's caller id changes nothing, as for any pending id", async () => {
    const q = await redis.queue({ groups: 1 });
    await q.flows.add({
      body: 'p',
      options: { id: 'report-1' },
      children: [{ body: 'c', options: { delay: 60_000 } }],
    });
    expect(await q.add('again', { id: 'report-1' })).toBe('report-1');
    const info = await q.get('report-1');
    expect([info?.state, info?.body]).toEqual(['waiting', 'p']);
    expect(await q.claim(0, 10)).toEqual([]);
  });

  it('cancel: a parent takes its pending children; a mandatory child is refused', async () => {
    const q = await redis.queue({ groups: 1 });
    const flow = await q.flows.add({
      body: 'parent',
      children: [
        { body: 'must', options: { delay: 60_000 } },
        { body: 'may', optional: true, options: { delay: 60_000 } },
        { body: 'mid', children: [{ body: 'deep', options: { delay: 60_000 } }] },
      ],
    });
    const [must, may, mid] = flow.children.map((child) => child.id) as [string, string, string];
    await expect(q.cancel(must)).rejects.toThrow(
      `cancel ${must}: its flow parent ${flow.id} waits for it`,
    );
    await expect(q.cancel(mid)).rejects.toMatchObject({ code: 'ERR_SKYQ_FLOW' });
    expect(await q.cancel(may)).toBe(true);
    expect((await q.get(flow.id))?.children).toMatchObject({
      cancelled: 1,
      delayed: 1,
      waiting: 1,
    });
    expect(await q.cancel(flow.id)).toBe(true);
    const deep = flow.children[2]?.children[0]?.id as string;
    for (const id of [flow.id, must, mid, deep]) expect(await q.get(id)).toBeNull();
    const flowKeys = await redis.plain.keys(`{${q.config.prefix}:0}:flow*`);
    expect(flowKeys).toEqual([]);
  });
});

describe("a parent's flow data goes with its record", () => {
  /** The flow hash's fields that name `parent`. */
  const fieldsOf = async (q: Queue, parent: string) =>
    (await redis.plain.hkeys(`{${q.config.prefix}:0}:flow`)).filter((f) =>
      f.startsWith(`${parent}:`),
    );

  /** Runs a flow of two children to its end; returns the parent's id. */
  async function runFlow(q: Queue): Promise<string> {
    const ids = await q.flows.add({ body: 'p', children: [{ body: 'a' }, { body: 'b' }] });
    await q.ack(await claimAtLeast(q, 0, 2));
    await q.ack(await claimAtLeast(q, 0, 1));
    return ids.id;
  }

  it('at once when no history is kept', async () => {
    const q = await redis.queue({ groups: 1, keepDone: false });
    const parent = await runFlow(q);
    expect(await q.get(parent)).toBeNull();
    expect(await fieldsOf(q, parent)).toEqual([]);
  });

  it('when the history forgets it, at the next sweep', async () => {
    const q = await redis.queue({ groups: 1, keepDone: { count: 3, ageMs: 0 } });
    const first = await runFlow(q);
    expect((await q.get(first))?.children).toMatchObject({ total: 2, done: 2 });
    expect(await fieldsOf(q, first)).toHaveLength(5); // n, c, d and each child's outcome
    await q.flows.sweep(0);
    expect(await fieldsOf(q, first)).toHaveLength(5); // still kept: still there
    await runFlow(q); // three more done jobs: the first flow's go from the history
    expect(await q.get(first)).toBeNull();
    expect((await q.flows.sweep(0)).trimmed).toBe(1);
    expect(await fieldsOf(q, first)).toEqual([]);
  });

  it('a dead parent keeps it while it is a dead letter, and runs with it when retried', async () => {
    const q = await redis.queue({ groups: 1 });
    const ids = await q.flows.add({ body: 'p', children: [{ body: 'a' }] });
    const [child] = await claimAtLeast(q, 0, 1);
    await q.fail(child as Message, new Error('bad'), { retry: false });
    await q.flows.sweep(0);
    expect((await q.get(ids.id))?.children).toMatchObject({ total: 1, dead: 1 });
    expect(await q.deadLetters.retry({ ids: [ids.id] })).toBe(1);
    await q.flows.sweep(0);
    const [parent] = await claimAtLeast(q, 0, 1);
    expect(parent?.id).toBe(ids.id);
    expect((await q.flows.children(parent as Message)).map((c) => [c.state, c.error])).toEqual([
      ['dead', 'bad'],
    ]);
  });
});

describe('flows over several groups', () => {
  it('cancel: children elsewhere go with their parent; one its parent elsewhere waits for stays', async () => {
    const q = await redis.queue({ groups: 3 });
    const later = { delay: 60_000 };
    const flow = await q.flows.add({
      body: 'parent',
      options: { group: 0 },
      children: [
        { body: 'must', options: { group: 1, ...later } },
        { body: 'may', optional: true, options: { group: 2, ...later } },
        {
          body: 'mid',
          options: { group: 2 },
          children: [{ body: 'deep', options: { group: 1, ...later } }],
        },
      ],
    });
    const [must, may, mid] = flow.children.map((child) => child.id) as [string, string, string];
    const deep = (flow.children[2] as FlowIds).children[0]?.id as string;
    // Its parent (in group 0) waits: the child's own slot cannot tell, so it asks there.
    await expect(q.cancel(must)).rejects.toMatchObject({ code: 'ERR_SKYQ_FLOW' });
    expect(await q.cancel(may)).toBe(true);
    await q.flows.relay.settled();
    expect((await q.get(flow.id))?.children).toMatchObject({
      cancelled: 1,
      delayed: 1,
      waiting: 1,
    });
    expect(await q.cancel(flow.id)).toBe(true);
    for (const id of [flow.id, must, mid, deep]) expect(await q.get(id)).toBeNull();
  });

  it('a child elsewhere may be cancelled once its parent no longer waits (it died of a sibling)', async () => {
    const q = await redis.queue({ groups: 2 });
    const flow = await q.flows.add({
      body: 'parent',
      options: { group: 0 },
      children: [{ body: 'bad' }, { body: 'later', options: { group: 1, delay: 60_000 } }],
    });
    const [bad, later] = flow.children.map((child) => child.id) as [string, string];
    const [job] = await claimIds(q, 0, [bad]);
    await q.fail(job as Message, new Error('boom'), { retry: false });
    expect((await q.get(flow.id))?.state).toBe('dead');
    expect(await q.cancel(later)).toBe(true);
    expect(await q.get(later)).toBeNull();
  });

  it('children in other groups: their outcomes are relayed to the parent', async () => {
    const q = await redis.queue({ groups: 3 });
    const flow = await q.flows.add({
      body: 'parent',
      options: { group: 0 },
      children: [
        { body: 'x', options: { group: 1 } },
        {
          body: 'y',
          options: { group: 2 },
          children: [{ body: 'z' }, { body: 'w', options: { group: 0 } }],
        },
      ],
    });
    const [x, y] = flow.children.map((child) => child.id) as [string, string];
    const grandchildren = (flow.children[1] as FlowIds).children;
    const [z, w] = grandchildren.map((child) => child.id) as [string, string];
    const [jx] = await claimIds(q, 1, [x]);
    const [jz] = await claimIds(q, 2, [z]);
    const [jw] = await claimIds(q, 0, [w]);
    await q.ack([jx as Message]);
    await q.ack([jz as Message]);
    await q.ack([jw as Message]);
    const [jy] = await waitFor('y to be released', async () => {
      const got = await q.claim(2, 10);
      return got.length > 0 ? got : undefined;
    });
    expect(jy?.id).toBe(y);
    expect((await q.flows.children(jy as Message)).map((child) => child.state)).toEqual([
      'done',
      'done',
    ]);
    await q.ack([jy as Message]);
    const [root] = await waitFor('the root to be released', async () => {
      const got = await q.claim(0, 10);
      return got.length > 0 ? got : undefined;
    });
    expect(root?.id).toBe(flow.id);
    const tree = await q.flows.get(flow.id);
    expect(tree?.state).toBe('active');
    expect(tree?.children.map((child) => [child.id, child.state])).toEqual([
      [x, 'done'],
      [y, 'done'],
    ]);
  });
});
