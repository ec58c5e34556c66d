// flows.add: a tree cannot be stored in one call when its nodes live in several slots, so
// every id is given first (caller ids, or generated ones from the id blocks), then the nodes go
// out in waves, parents before children: wave 0 holds the root and every node of its group
// reached through nodes of that group; a node in another group than its parent comes one wave
// after it. Each wave is one flow-add.lua call per group (more for a big one, in order), and a
// wave starts only once the one before it was stored whole, so a child's outcome always finds
// its parent there (lua/flow-lib.lua), and no parent becomes due while a child is missing: its
// count covers every child from the start. A call that fails stops the waves after it; the
// FlowAddError's retry() sends what is missing under the same ids (flow-add.lua leaves a node
// that holds this very record already as it is, so an add whose outcome was unknown is not
// stored twice).
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { errors, FlowAddError, type FlowIds } from '../../base/errors.js';
import { type PreparedMessage, prepareContext, prepareMessage } from '../add-options.js';
import type { QueueConfig } from '../config.js';
import type { IdBlocks } from '../id-blocks.js';
import { tagsOf } from '../record.js';
import { type FlowNode, idTree, layOut, resolveGroups } from './tree.js';

/** Most nodes, and bytes of records, in one flow-add.lua call. */
const CHUNK_NODES = 1000;
const CHUNK_BYTES = 1024 * 1024;

export interface FlowAddContext {
  config: QueueConfig;
  idBlocks: IdBlocks;
  /** Redis time in ms at the performance.now() reading `at`, on `group`'s server */
  now(group: number, at: number): Promise<number>;
  /** one flow-add.lua call */
  run(group: number, args: (string | Buffer)[]): Promise<unknown>;
  /** one flow-taken.lua call: pairs of a caller id and its record's SHA-1 */
  taken(group: number, args: string[]): Promise<unknown>;
  /** the error a reader should see */
  explain(error: unknown): unknown;
  /** a group for a root that names none */
  pickGroup(): number;
}

interface Plan {
  nodes: FlowNode[];
  ids: string[];
  prepared: PreparedMessage[];
  waves: number[];
}

/** Adds the flow `spec`; resolves its ids once every node is stored. */
export async function addFlow(context: FlowAddContext, spec: unknown): Promise<FlowIds> {
  const { config } = context;
  const nodes = layOut(config, spec);
  const shared = prepareContext();
  // Every body and option checked before an id is reserved or anything is written.
  const prepare = (node: FlowNode, tags = '') =>
    prepareMessage(
      config,
      node.body,
      { ...node.options, name: node.name },
      node.field,
      shared,
      tags,
    );
  for (const node of nodes) {
    const prepared = prepare(node);
    if (prepared.spill)
      throw errors.body(
        `${node.field}.body`,
        `is too big for a flow node, whose record (body, name and a header of about 20 bytes) takes up to 64 KiB: this one is ${prepared.spill.bytes} bytes`,
      );
  }
  resolveGroups(nodes, context.pickGroup);
  const ids = await giveIds(context.idBlocks, nodes);
  const prepared = nodes.map((node) => {
    const up = node.parent === -1 ? undefined : (nodes[node.parent] as FlowNode);
    const parent = up && { id: ids[up.index] as string, group: up.group, optional: node.optional };
    const childCount = node.children.length > 0 ? node.children.length : undefined;
    return prepare(node, tagsOf({ parent, childCount }));
  });
  const plan = { nodes, ids, prepared, waves: wavesOf(nodes) };
  await refuseTaken(context, plan);
  return sendAll(
    context,
    plan,
    nodes.map((node) => node.index),
  );
}

/** Caller ids as given; generated ones from each group's id block, in tree order. */
async function giveIds(idBlocks: IdBlocks, nodes: FlowNode[]): Promise<string[]> {
  const wanted = new Map<number, FlowNode[]>();
  for (const node of nodes) {
    if (node.callerId !== '') continue;
    const list = wanted.get(node.group) ?? [];
    list.push(node);
    wanted.set(node.group, list);
  }
  const ids = nodes.map((node) => node.callerId);
  await Promise.all(
    [...wanted].map(async ([group, list]) => {
      const taken = await idBlocks.take(group, list.length);
      list.forEach((node, i) => {
        ids[node.index] = taken[i] as string;
      });
    }),
  );
  return ids;
}

/**
 * Refuses the flow, before anything is written, when a pending message holds one of its caller
 * ids. flow-add.lua refuses those too, but a node in a later wave (another group) or a later
 * chunk would be refused only after its parent was stored waiting for it: that parent would
 * wait for good, and count the stranger as its child.
 */
async function refuseTaken(context: FlowAddContext, plan: Plan): Promise<void> {
  const byGroup = new Map<number, string[]>();
  for (const node of plan.nodes) {
    if (node.callerId === '') continue;
    const record = (plan.prepared[node.index] as PreparedMessage).record;
    const args = byGroup.get(node.group) ?? [];
    args.push(node.callerId, createHash('sha1').update(record).digest('hex'));
    byGroup.set(node.group, args);
  }
  const taken: { id: string; group: number }[] = [];
  try {
    await Promise.all(
      [...byGroup].map(async ([group, args]) => {
        for (let at = 0; at < args.length; at += 2 * CHUNK_NODES) {
          const reply = await context.taken(group, args.slice(at, at + 2 * CHUNK_NODES));
          for (const id of reply as string[]) taken.push({ id: String(id), group });
        }
      }),
    );
  } catch (error) {
    throw context.explain(error);
  }
  if (taken.length > 0) throw errors.flowIdsTaken(taken);
}

/** A node's wave: its parent's, plus one when it lives in another group. */
function wavesOf(nodes: FlowNode[]): number[] {
  const waves: number[] = [];
  for (const node of nodes) {
    const up = nodes[node.parent];
    waves[node.index] = up ? (waves[up.index] as number) + (up.group === node.group ? 0 : 1) : 0;
  }
  return waves;
}

/** Sends the nodes `todo` (indexes) wave by wave; resolves the ids, or throws FlowAddError. */
async function sendAll(context: FlowAddContext, plan: Plan, todo: number[]): Promise<FlowIds> {
  const missing: number[] = [];
  let cause: unknown;
  const at = performance.now();
  const last = Math.max(...todo.map((index) => plan.waves[index] as number));
  for (let wave = 0; wave <= last; wave++) {
    const mine = todo.filter((index) => plan.waves[index] === wave);
    if (cause !== undefined) {
      missing.push(...mine);
      continue;
    }
    const byGroup = new Map<number, number[]>();
    for (const index of mine) {
      const group = (plan.nodes[index] as FlowNode).group;
      byGroup.set(group, [...(byGroup.get(group) ?? []), index]);
    }
    await Promise.all(
      [...byGroup].map(async ([group, list]) => {
        const parts = chunks(plan, list);
        for (let i = 0; i < parts.length; i++) {
          try {
            await sendChunk(context, plan, group, parts[i] as number[], at);
          } catch (error) {
            cause ??= context.explain(error);
            missing.push(...parts.slice(i).flat());
            return;
          }
        }
      }),
    );
  }
  const ids = idTree(plan.nodes, plan.ids);
  if (missing.length === 0) return ids;
  missing.sort((a, b) => a - b);
  const retry = () => sendAll(context, plan, missing);
  throw new FlowAddError(
    ids,
    missing.map((index) => plan.ids[index] as string),
    retry,
    cause,
  );
}

/** A group's nodes of one wave, in tree order, cut by count and bytes. */
function chunks(plan: Plan, list: number[]): number[][] {
  const out: number[][] = [];
  let part: number[] = [];
  let bytes = 0;
  for (const index of list) {
    const size = (plan.prepared[index] as PreparedMessage).bytes;
    if (part.length > 0 && (part.length >= CHUNK_NODES || bytes + size > CHUNK_BYTES)) {
      out.push(part);
      part = [];
      bytes = 0;
    }
    part.push(index);
    bytes += size;
  }
  if (part.length > 0) out.push(part);
  return out;
}

/** One flow-add.lua call: 7 arguments per node (see its header). */
async function sendChunk(
  context: FlowAddContext,
  plan: Plan,
  group: number,
  part: number[],
  at: number,
): Promise<void> {
  const { unitMs, events } = context.config;
  const now = await context.now(group, at);
  const args: (string | Buffer)[] = [String(unitMs), events ? '1' : '', String(part.length)];
  for (const index of part) {
    const node = plan.nodes[index] as FlowNode;
    const message = plan.prepared[index] as PreparedMessage;
    const dueMs = 'runAt' in message.due ? message.due.runAt : now + message.due.delay;
    const score = dueMs > now ? String(unitMs === 1 ? dueMs : dueMs / unitMs) : '';
    const up = plan.nodes[node.parent];
    const ref = up ? `${up.group}:${node.optional ? 'o' : 'm'}:${plan.ids[up.index]}` : '';
    const children = node.children.map((child) => {
      const entry = plan.nodes[child] as FlowNode;
      return [entry.group, plan.ids[child], entry.optional ? 1 : 0, entry.name ?? ''];
    });
    args.push(plan.ids[index] as string, node.callerId === '' ? 'g' : 'c', score);
    args.push(message.record, String(message.priority), ref);
    args.push(children.length > 0 ? JSON.stringify(children) : '');
  }
  await context.run(group, args);
}
