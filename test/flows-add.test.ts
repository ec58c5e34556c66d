/**
 * README, Flows: adding a tree across slots cannot be one call. An acknowledged flows.add
 * stored every node; one that failed part-way rejects with a FlowAddError whose retry()
 * completes it under the same ids (a call whose reply was lost is not stored twice), and
 * meanwhile no parent becomes due: its count covers the missing child. Bad input is refused
 * with one line naming the node and option, before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { FlowAddError, type Message, type Queue } from '../src/index.js';
import { nodesOf } from './helpers/flows.js';
import { claimAtLeast, useQueueRedis, waitFor } from './helpers/queue.js';

const redis = useQueueRedis();

/** Claims every message of `group` and acks it; returns their ids. */
async function drain(queue: Queue, group: number): Promise<string[]> {
  const got: Message[] = await queue.claim(group, 100);
  await queue.ack(got);
  return got.map((m) => m.id);
}

describe('flows.add across slots', () => {
  it('a caller id a pending message holds in another group refuses the flow, writing nothing', async () => {
    const q = await redis.queue({ groups: 2 });
    // Someone else's jobs hold the ids two children in group 1 ask for: one delayed, one ready.
    await q.add('someone else', { id: 'X', group: 1, delay: 3_600_000 });
    await q.add('someone else too', { id: 'Y', group: 1 });
    const spec = {
      body: 'root',
      options: { group: 0, id: 'R' },
      children: [
        { body: 'mine', options: { group: 0 } },
        { body: 'x', options: { id: 'X', group: 1 } },
        { body: 'y', options: { id: 'Y', group: 1 } },
      ],
    };
    const error = await q.flows.add(spec).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(FlowAddError); // nothing to retry: nothing went in
    expect(error).toMatchObject({
      code: 'ERR_SKYQ_FLOW',
      message:
        'flows.add: ids are taken by pending messages: X (group 1), Y (group 1); nothing was added',
    });
    expect(await q.get('R')).toBeNull();
    expect(await drain(q, 0)).toEqual([]);
    // The strangers are theirs still, and cancelling the flow's root changes nothing of theirs.
    expect(await q.cancel('R')).toBe(false);
    expect((await q.get('X'))?.body).toBe('someone else');
    expect(await drain(q, 1)).toEqual(['Y']);
  });

  it("cancelling a part-added flow's root leaves a stranger that took a missing child's id", async () => {
    const q = await redis.queue({ groups: 2 });
    // 1,002 children in group 0 go out in two calls, and the second fails; so does group 1's.
    const run = q.run.bind(q);
    const calls = new Map<number, number>();
    q.run = async (name, group, args, buffers) => {
      if (name === 'flow-add') {
        calls.set(group, (calls.get(group) ?? 0) + 1);
        if (group === 1 || calls.get(group) === 2) throw new Error('connection lost');
      }
      return run(name, group, args, buffers);
    };
    const kids = Array.from({ length: 1001 }, (_, i) => ({ body: i }));
    const spec = {
      body: 'root',
      options: { group: 0, id: 'R' },
      children: [
        ...kids,
        { body: 'last', options: { id: 'L' } },
        { body: 'x', options: { id: 'X', group: 1 } },
      ],
    };
    const failed = (await q.flows.add(spec).catch((e: unknown) => e)) as FlowAddError;
    expect(failed).toBeInstanceOf(FlowAddError);
    expect(failed.missing).toContain('L');
    expect(failed.missing).toContain('X');
    q.run = run;
    // Meanwhile other programs' jobs take the ids the flow could not store.
    await q.add('a stranger here', { id: 'L', group: 0, delay: 3_600_000 });
    await q.add('a stranger there', { id: 'X', group: 1, delay: 3_600_000 });
    expect(await q.cancel('R')).toBe(true);
    expect((await q.get('L'))?.body).toBe('a stranger here');
    expect((await q.get('X'))?.body).toBe('a stranger there');
    // The flow's own children went with it: only the strangers are pending.
    const pending = (await q.counts()).reduce((n, c) => n + c.delayed + c.ready + c.active, 0);
    expect(pending).toBe(2);
  });

  it('a failed part rejects; the parent waits for the missing child; retry() completes it', async () => {
    const q = await redis.queue({ groups: 3 });
    // The call that stores group 2's part fails (the connection dropped before it was sent).
    const run = q.run.bind(q);
    let failures = 0;
    q.run = async (name, group, args, buffers) => {
      if (name === 'flow-add' && group === 2 && failures++ === 0)
        throw new Error('connection lost');
      return run(name, group, args, buffers);
    };
    const spec = {
      body: 'root',
      options: { group: 0 },
      children: [
        { body: 'here' },
        { body: 'there', options: { group: 1 } },
        {
          body: 'away',
          options: { group: 2 },
          children: [{ body: 'below', options: { group: 1 } }],
        },
      ],
    };
    const error = await q.flows.add(spec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlowAddError);
    const failed = error as FlowAddError;
    const [here, there, away] = failed.ids.children.map((child) => child.id) as [
      string,
      string,
      string,
    ];
    const below = failed.ids.children[2]?.children[0]?.id as string;
    expect(failed.message).toMatch(
      /^flows\.add: 2 nodes of the flow \S+ were not added \(.*connection lost/,
    );
    expect(failed.missing).toEqual([away, below]);
    // What went in runs; the root still waits for the child that is missing.
    expect(await drain(q, 0)).toEqual([here]);
    expect(await drain(q, 1)).toEqual([there]);
    await q.flows.sweep(1);
    expect((await q.get(failed.ids.id))?.state).toBe('waiting');
    expect(await drain(q, 0)).toEqual([]);

    expect(await failed.retry()).toEqual(failed.ids);
    expect(await drain(q, 1)).toEqual([below]);
    await waitFor('away to be released', async () =>
      (await q.get(away))?.state === 'ready' ? true : undefined,
    );
    expect(await drain(q, 2)).toEqual([away]);
    const [root] = await claimAtLeast(q, 0, 1);
    expect(root?.id).toBe(failed.ids.id);
  });

  it('a call whose reply was lost is sent again without storing anything twice', async () => {
    const q = await redis.queue({ groups: 2 });
    const run = q.run.bind(q);
    let lost = 0;
    q.run = async (name, group, args, buffers) => {
      const reply = await run(name, group, args, buffers);
      if (name === 'flow-add' && group === 1 && lost++ === 0) throw new Error('connection lost');
      return reply;
    };
    const spec = {
      body: 'root',
      options: { group: 0 },
      children: [
        { body: 'a', options: { group: 1 } },
        { body: 'b', options: { group: 1 }, children: [{ body: 'c' }] },
      ],
    };
    const error = (await q.flows.add(spec).catch((e: unknown) => e)) as FlowAddError;
    expect(error.missing).toHaveLength(3);
    await error.retry();
    const ids = nodesOf(error.ids).map(({ node }) => node.id);
    const leaves = await drain(q, 1);
    expect(leaves.sort()).toEqual([ids[1], ids[3]].sort());
    await q.flows.sweep(1);
    await waitFor('b to be released', async () =>
      (await q.get(ids[2] as string))?.state === 'ready' ? true : undefined,
    );
    expect(await drain(q, 1)).toEqual([ids[2]]);
    await q.flows.sweep(1);
    const [root] = await claimAtLeast(q, 0, 1);
    expect(root?.id).toBe(ids[0]);
    expect((await q.flows.children(root as Message)).map((child) => child.state)).toEqual([
      'done',
      'done',
    ]);
    expect(await drain(q, 1)).toEqual([]);
  });

  it('caller ids: a pending one is refused, a finished one replaced, the flow runs under them', async () => {
    const q = await redis.queue({ groups: 1 });
    await q.add('already', { id: 'job-b', delay: 60_000 });
    const spec = (b: string) => ({
      body: 'root',
      options: { id: 'job-root' },
      children: [
        { body: 'a', options: { id: 'job-a' } },
        { body: 'b', options: { id: b } },
      ],
    });
    await expect(q.flows.add(spec('job-b'))).rejects.toThrow(
      'flows.add: an id is taken by pending messages: job-b (group 0); nothing was added',
    );
    expect(await q.get('job-root')).toBeNull();
    const ids = await q.flows.add(spec('job-c'));
    expect(nodesOf(ids).map(({ node }) => node.id)).toEqual(['job-root', 'job-a', 'job-c']);
    expect(await drain(q, 0)).toEqual(['job-a', 'job-c']);
    expect(await drain(q, 0)).toEqual(['job-root']);
    // Done (and kept): the same caller ids make a new flow.
    const again = await q.flows.add(spec('job-c'));
    expect(again).toEqual(ids);
    expect((await q.get('job-root'))?.state).toBe('waiting');
  });

  it('refuses bad input with one line naming the node, writing nothing', async () => {
    const q = await redis.queue({ groups: 2 });
    const deep = (n: number): object =>
      n === 0 ? { body: 'x' } : { body: 'x', children: [deep(n - 1)] };
    const cases: [unknown, RegExp][] = [
      [null, /^flow: must be \{ body, name\?, options\?, children\? \}/],
      [{ children: [] }, /^flow\.body: is missing/],
      [{ body: 'x', children: 'no' }, /^flow\.children: must be an array/],
      [{ body: 'x', optional: true }, /^flow\.optional: is for children/],
      [
        { body: 'x', children: [{ body: 'y', optional: 'yes' }] },
        /^flow\.children\[0\]\.optional: must be true or false/,
      ],
      [
        { body: 'x', children: [{ body: 'y', options: { dedupeMs: 10 } }] },
        /^flow\.children\[0\]\.options\.dedupeMs: flows take no dedupe window/,
      ],
      [
        { body: 'x', options: { name: 'n' } },
        /^flow\.options\.name: give the name beside the body/,
      ],
      [
        { body: 'x', children: [{ body: 'y', color: 'red' }] },
        /^color: flow\.children\[0\]: unknown option/,
      ],
      [
        { body: 'x', children: [{ body: 'y', options: { group: 5 } }] },
        /^flow\.children\[0\]\.options\.group: must be a group number from 0 to 1/,
      ],
      [
        { body: 'x', options: { id: 'same' }, children: [{ body: 'y', options: { id: 'same' } }] },
        /^flow\.children\[0\]\.options\.id: is given twice in this flow/,
      ],
      [
        { body: 'x', children: [{ body: 'y'.repeat(70_000) }] },
        /^flow\.children\[0\]\.body: is too big for a flow node, whose record \(body, name and a header of about 20 bytes\) takes up to 64 KiB: this one is 700\d\d bytes$/,
      ],
      [
        { body: 'x', children: [{ body: 'y', options: { delay: -1 } }] },
        /^flow\.children\[0\]\.options\.delay: must be ≥ 0/,
      ],
      [
        { body: 'x', children: [{ body: 'y', options: { attempts: 0 } }] },
        /^flow\.children\[0\]\.options\.attempts: must be between 1 and 1000/,
      ],
      [{ body: 'x', options: { backoff: 'soon' } }, /^flow\.options\.backoff: must be /],
      [deep(20), /is deeper than 20 levels/],
    ];
    for (const [spec, message] of cases) {
      const error = await q.flows.add(spec as never).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(await redis.plain.keys(`*${q.config.prefix}*`)).not.toContain(
      keyOf(q.config.prefix, 0, 'msg'),
    );
  });
});
