/**
 * Issue 28 §1: a property of flows, tried on random trees with fast-check against a small model,
 * on a real redis-server. Random trees (up to depth 4), each node in its parent's group or one
 * of its own (so outcomes cross slots), children optional or not, each job's handler succeeding
 * or dying; consumers claim the groups in a random order, ack or fail, and relay the outboxes
 * at random moments. Against the model:
 * - a parent runs once, only when every child ended, and never when a mandatory child died:
 *   then it is dead with the reason "child <id> failed: <reason>", up to the root;
 * - every job that may run runs exactly once (the siblings of a dead child too);
 * - a parent's `job.children` lists its children in order, each done (with its result) or,
 *   for an optional one, dead with its error;
 * - at the end no parent waits, and no outbox holds anything.
 * SKYQ_PROPERTY_RUNS (25 in CI) and SKYQ_PROPERTY_SEED: test/helpers/property.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import type { FlowIds, FlowSpec, Message, Queue } from '../src/index.js';
import { nodesOf } from './helpers/flows.js';
import { propertyParameters } from './helpers/property.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const GROUPS = 3;

/** A node of a random tree: where it lives, whether it is optional, how its handler ends. */
interface Node {
  group: number | null;
  optional: boolean;
  dies: boolean;
  children: Node[];
}

const node: fc.Memo<Node> = fc.memo((depth) =>
  fc.record({
    group: fc.option(fc.integer({ min: 0, max: GROUPS - 1 }), { freq: 2 }),
    optional: fc.boolean(),
    dies: fc.integer({ min: 0, max: 3 }).map((n) => n === 0), // a quarter of the handlers fail
    children: depth <= 1 ? fc.constant([]) : fc.array(node(depth - 1), { maxLength: 3 }),
  }),
);

interface Case {
  tree: Node;
  /** the order groups are claimed in at each step, and when outboxes are relayed */
  order: number[][];
  relayEvery: number;
}

const cases: fc.Arbitrary<Case> = fc.record({
  tree: node(4).filter((n) => n.children.length > 0),
  order: fc.array(fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }), {
    minLength: 1,
    maxLength: 5,
  }),
  relayEvery: fc.integer({ min: 1, max: 3 }),
});

function specOf(tree: Node, root = true): FlowSpec {
  return {
    body: { dies: tree.dies },
    ...(root ? {} : { optional: tree.optional }),
    ...(tree.group === null ? {} : { options: { group: tree.group } }),
    ...(tree.children.length > 0 ? { children: tree.children.map((c) => specOf(c, false)) } : {}),
  };
}

/** What the model expects of a node: whether it runs, and how it ends. */
interface Expected {
  runs: boolean;
  state: 'done' | 'dead';
  /** a dead parent that never ran: the child it died of must be one of these */
  diedOf?: string[];
}

function model(tree: Node, ids: FlowIds, out: Map<string, Expected>): Expected {
  const children = tree.children.map((child, i) => model(child, ids.children[i] as FlowIds, out));
  const fatal = tree.children
    .map((child, i) => ({
      child,
      id: (ids.children[i] as FlowIds).id,
      end: children[i] as Expected,
    }))
    .filter(({ child, end }) => !child.optional && end.state === 'dead')
    .map(({ id }) => id);
  const expected: Expected =
    fatal.length > 0
      ? { runs: false, state: 'dead', diedOf: fatal }
      : { runs: true, state: tree.dies ? 'dead' : 'done' };
  out.set(ids.id, expected);
  return expected;
}

interface Seen {
  runs: number;
  children?: string[];
}

/** Claims in the case's order until nothing is left to claim, relaying now and then. */
async function drive(q: Queue, c: Case): Promise<Map<string, Seen>> {
  const seen = new Map<string, Seen>();
  const relay = async () => {
    await q.flows.relay.settled();
    for (let g = 0; g < GROUPS; g++) await q.flows.sweep(g);
  };
  for (let step = 0, idle = 0; step < 200 && idle < 2; step++) {
    let claimed = 0;
    for (const g of c.order[step % c.order.length] as number[]) {
      const jobs: Message[] = await q.claim(g, 20);
      claimed += jobs.length;
      for (const job of jobs) {
        const entry = seen.get(job.id) ?? { runs: 0 };
        entry.runs++;
        if (job.childCount !== undefined) {
          entry.children = (await q.flows.children(job)).map((child) =>
            child.state === 'done' ? `done ${child.result}` : `${child.state} ${child.error}`,
          );
        }
        seen.set(job.id, entry);
        if ((job.body as { dies: boolean }).dies)
          await q.fail(job, new Error(`boom ${job.id}`), { retry: false });
        else {
          job.result = `r:${job.id}`;
          await q.ack([job]);
        }
      }
    }
    if (claimed === 0 || step % c.relayEvery === 0) await relay();
    idle = claimed === 0 ? idle + 1 : 0;
  }
  await relay();
  await relay(); // the second round clears what the first found recorded
  return seen;
}

describe('flows against a model', () => {
  it('random trees, failures and optional children end as the model says', async () => {
    const q = await redis.queue({ groups: GROUPS, keepDone: { count: 10_000, ageMs: 0 } });
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const ids = await q.flows.add(specOf(c.tree));
        const expected = new Map<string, Expected>();
        model(c.tree, ids, expected);
        const seen = await drive(q, c);
        const problems: string[] = [];
        const nodes = nodesOf(ids);
        for (const { node: n } of nodes) {
          const want = expected.get(n.id) as Expected;
          const got = seen.get(n.id);
          if ((got?.runs ?? 0) !== (want.runs ? 1 : 0))
            problems.push(`${n.id} ran ${got?.runs ?? 0} times`);
          const info = await q.get(n.id);
          if (info?.state !== want.state)
            problems.push(`${n.id} is ${info?.state}, not ${want.state}`);
          if (want.diedOf) {
            const reason = info?.deadReason ?? '';
            if (!want.diedOf.some((child) => reason.startsWith(`child ${child} failed: `)))
              problems.push(`${n.id} died of "${reason}", not of one of ${want.diedOf.join(', ')}`);
          }
          if (want.runs && n.children.length > 0) {
            // A dead child's error is its own failure, or (it never ran) the child it died of.
            const wanted = n.children.map((child) => {
              const end = expected.get(child.id) as Expected;
              if (end.state === 'done') return `done r:${child.id}`;
              return end.runs ? `dead boom ${child.id}` : 'dead child ';
            });
            const saw = got?.children ?? [];
            const same = wanted.every((w, i) =>
              w === 'dead child ' ? (saw[i] ?? '').startsWith(w) : saw[i] === w,
            );
            if (!same || saw.length !== wanted.length)
              problems.push(`${n.id} saw ${JSON.stringify(saw)}, not ${JSON.stringify(wanted)}`);
          }
        }
        for (let g = 0; g < GROUPS; g++) {
          const left =
            (await redis.plain.zcard(keyOf(q.config.prefix, g, 'waiting'))) +
            (await redis.plain.hlen(keyOf(q.config.prefix, g, 'outbox')));
          if (left > 0)
            problems.push(`group ${g} still holds ${left} waiting parents or outbox entries`);
        }
        expect(problems).toEqual([]);
      }),
      propertyParameters(25),
    );
  }, 240_000);
});
