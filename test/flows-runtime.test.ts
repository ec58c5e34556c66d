/**
 * Flows under the actor runtime on a real Redis: a tree of depth 3 with 100 leaves in one
 * group runs every parent once, after its last child, with `job.children` in order; the same
 * on the piscina pool; a leaf that dies takes its parent and the root with it (the siblings
 * still run); children in other groups are relayed to their parents.
 */
import { describe, expect, it } from 'vitest';
import { type Body, type Message, Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { expectFlowRan, type FlowRun, nodesOf, tree3 } from './helpers/flows.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

async function runsOf(): Promise<FlowRun[]> {
  return (await redis.client.lrange('flow:runs', 0, -1)).map((line) => JSON.parse(line) as FlowRun);
}

async function withLauncher(
  prefix: string,
  options: { groups: number; pool?: number },
  test: (queue: Queue) => Promise<void>,
): Promise<void> {
  await redis.client.del('flow:runs');
  const where = { redis: redis.server.url, prefix, groups: options.groups };
  const queue = new Queue(where);
  const launcher = await startActors({
    ...where,
    logDir: tempDir(),
    handler: fixture('flow-record.mjs'),
    ...(options.pool ? { pool: options.pool } : {}),
  });
  try {
    await test(queue);
  } finally {
    await launcher.stop();
    await queue.close();
  }
}

describe('flows under the runtime', () => {
  it('a depth-3 tree of 100 leaves in one group: every parent once, after its children', async () => {
    await withLauncher('fr1', { groups: 4 }, async (queue) => {
      const ids = await queue.flows.add(tree3(10));
      const group = (await queue.get(ids.id))?.group;
      const runs = await waitFor(
        'the root to run',
        async () => {
          const got = await runsOf();
          return got.some((run) => run.id === ids.id) ? got : undefined;
        },
        30_000,
      );
      expectFlowRan(ids, runs);
      // One slot: every node lives in the root's group.
      expect(new Set(runs.map((run) => run.g))).toEqual(new Set([group]));
      await waitFor('the root acked', async () =>
        (await queue.get(ids.id))?.state === 'done' ? true : undefined,
      );
      expect((await queue.listCounts()).waiting).toBe(0);
    });
  });

  it('runs the same on the piscina pool', async () => {
    await withLauncher('fr2', { groups: 2, pool: 1 }, async (queue) => {
      const ids = await queue.flows.add(tree3(3));
      const runs = await waitFor(
        'the root to run',
        async () => {
          const got = await runsOf();
          return got.some((run) => run.id === ids.id) ? got : undefined;
        },
        30_000,
      );
      expectFlowRan(ids, runs);
    });
  });

  it('a leaf that dies: its parent and the root die, the other leaves still run', async () => {
    await withLauncher('fr3', { groups: 2 }, async (queue) => {
      const ids = await queue.flows.add(
        tree3(
          3,
          () => ({ attempts: 1 }),
          (level, i): Body => (level === 3 && i === 2 ? { fail: 'boom' } : {}),
        ),
      );
      const mid = ids.children[0]?.id as string;
      const bad = ids.children[0]?.children[0]?.id as string;
      const root = await waitFor('the root to die', async () => {
        const info = await queue.get(ids.id);
        return info?.state === 'dead' ? info : undefined;
      });
      expect(root.deadReason).toBe(
        `child ${mid} failed: child ${bad} failed: failed 1 of 1 attempts: boom`,
      );
      const leaves = nodesOf(ids).filter(({ node }) => node.children.length === 0);
      const runs = await waitFor('every leaf to run', async () => {
        const got = await runsOf();
        return got.length >= leaves.length + 2 ? got : undefined;
      });
      // The two healthy mids ran; the dead one and the root never did.
      const ran = new Set(runs.map((run) => run.id));
      expect(ran.has(mid) || ran.has(ids.id)).toBe(false);
      expect(ids.children.slice(1).every((child) => ran.has(child.id))).toBe(true);
    });
  });

  it("an outcome left in the outbox (its relay never ran) is relayed by a launcher's sweep", async () => {
    await redis.client.del('flow:runs');
    const where = { redis: redis.server.url, prefix: 'fr5', groups: 2 };
    const queue = new Queue(where);
    try {
      const ids = await queue.flows.add({
        body: {},
        options: { group: 0 },
        children: [{ body: {}, options: { group: 1 } }],
      });
      const [child] = await queue.claim(1, 1);
      // The acking client dies right after its ack: no relay runs.
      queue.flows.relay.kick = () => undefined;
      await queue.ack([child as Message]);
      expect(await redis.client.hlen(`{fr5:1}:outbox`)).toBe(1);
      expect((await queue.get(ids.id))?.state).toBe('waiting');
      const launcher = await startActors({
        ...where,
        logDir: tempDir(),
        handler: fixture('flow-record.mjs'),
      });
      try {
        const runs = await waitFor('the parent to run', async () => {
          const got = await runsOf();
          return got.some((run) => run.id === ids.id) ? got : undefined;
        });
        expect(runs.find((run) => run.id === ids.id)?.children).toEqual([
          [child?.id, 'done', null, null],
        ]);
      } finally {
        await launcher.stop();
      }
    } finally {
      await queue.close();
    }
  });

  it('children in other groups are relayed to their parent', async () => {
    await withLauncher('fr4', { groups: 4 }, async (queue) => {
      const ids = await queue.flows.add(
        tree3(4, (level, i) => (level === 1 ? { group: 0 } : { group: i % 4 })),
      );
      const runs = await waitFor(
        'the root to run',
        async () => {
          const got = await runsOf();
          return got.some((run) => run.id === ids.id) ? got : undefined;
        },
        30_000,
      );
      expectFlowRan(ids, runs);
      expect(new Set(runs.map((run) => run.g)).size).toBe(4);
    });
  });
});
