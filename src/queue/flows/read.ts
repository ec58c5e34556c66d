// Reading flows: a parent's children and their outcomes (flow-children.lua, one call per group
// of parents), where pending ones stand (flow-states.lua, one call per group of children), and
// from both a parent's children counted by state, or a flow's whole tree level by level.
import type { ChildCounts, MessageState } from '../message-info.js';
import { type FlowParent, parseParentRef } from '../record.js';
import { type ChildEntry, type FlowChild, flowChild } from './outcome.js';
import { MAX_FLOW_DEPTH } from './tree.js';

export type ReadScript = (
  name: 'flow-children' | 'flow-states',
  group: number,
  args: (string | number)[],
) => Promise<unknown>;

/** A parent's flow data: its children with their outcomes, and its own parent. */
export interface ParentData {
  /** children not ended yet */
  left: number;
  /** its children in the order given, with how each ended */
  children: FlowChild[];
  /** its own parent, when it is a child too */
  parent: FlowParent | undefined;
}

/**
 * The flow data of parents of one group, in their order; null for an id without any. `what`:
 * 'all' reads each done child's result, 'states' leaves them out (the views).
 */
export async function readParents(
  run: ReadScript,
  group: number,
  parents: string[],
  what: 'all' | 'states' = 'states',
): Promise<(ParentData | null)[]> {
  if (parents.length === 0) return [];
  const reply = (await run('flow-children', group, [what, ...parents])) as (
    | Buffer
    | number
    | null
  )[];
  const out: (ParentData | null)[] = [];
  let at = 0;
  for (let p = 0; p < parents.length; p++) {
    const [left, list, ref, count] = reply.slice(at, at + 4);
    const outcomes = reply.slice(at + 4, at + 4 + Number(count)) as (Buffer | null)[];
    at += 4 + Number(count);
    if (left === null || list === null) {
      out.push(null);
      continue;
    }
    const entries = JSON.parse(String(list)) as ChildEntry[];
    out.push({
      left: Number(String(left)),
      children: entries.map((entry, i) => flowChild(entry, outcomes[i] ?? null)),
      parent: ref === null ? undefined : parseParentRef(String(ref)),
    });
  }
  return out;
}

/** Where each of `ids` stands in `group` ('' when it is not there). */
export async function readStates(
  run: ReadScript,
  unitMs: number,
  group: number,
  ids: string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const reply = (await run('flow-states', group, [unitMs, ...ids])) as (Buffer | string)[];
  return reply.map(String);
}

/** The states of children spread over groups, each group read once. */
async function statesOf(run: ReadScript, unitMs: number, children: FlowChild[]) {
  const byGroup = new Map<number, FlowChild[]>();
  for (const child of children)
    byGroup.set(child.group, [...(byGroup.get(child.group) ?? []), child]);
  const states = new Map<FlowChild, string>();
  await Promise.all(
    [...byGroup].map(async ([group, list]) => {
      const found = await readStates(
        run,
        unitMs,
        group,
        list.map((child) => child.id),
      );
      list.forEach((child, i) => {
        states.set(child, found[i] ?? '');
      });
    }),
  );
  return states;
}

/** A parent's children counted by state; null when it has no flow data (not a parent). */
export async function childCounts(
  run: ReadScript,
  unitMs: number,
  group: number,
  parent: string,
): Promise<ChildCounts | null> {
  const [data] = await readParents(run, group, [parent]);
  if (!data) return null;
  const counts: ChildCounts = {
    total: data.children.length,
    delayed: 0,
    ready: 0,
    active: 0,
    waiting: 0,
    done: 0,
    dead: 0,
    cancelled: 0,
  };
  const pending = data.children.filter((child) => child.state === 'pending');
  const states = await statesOf(run, unitMs, pending);
  for (const child of data.children) {
    const state = child.state === 'pending' ? states.get(child) : child.state;
    if (state && state in counts && state !== 'total') counts[state as keyof ChildCounts]++;
  }
  return counts;
}

/** One node of a flow's tree (queue.flows.get): where it stands, and its children. */
export interface FlowTreeNode {
  /** its id */
  id: string;
  /** its group */
  group: number;
  /** its name, if it has one */
  name: string | undefined;
  /** a child that may die without its parent */
  optional: boolean;
  /** where it is; cancelled when its parent says so; unknown when it is gone (not kept) */
  state: MessageState | 'cancelled' | 'unknown';
  /** dead: why, when its parent's flow data holds it */
  error?: string;
  /** its children, for a parent ([] for a leaf, or when the tree was cut at `maxNodes`) */
  children: FlowTreeNode[];
}

/** A flow's tree from one node down, read level by level (at most `maxNodes` nodes). */
export async function readTree(
  run: ReadScript,
  unitMs: number,
  root: { id: string; group: number; name: string | undefined; state: MessageState },
  maxNodes = 1000,
): Promise<FlowTreeNode> {
  const top: FlowTreeNode = { ...root, optional: false, children: [] };
  let level = [top];
  let seen = 1;
  for (let depth = 0; depth < MAX_FLOW_DEPTH && level.length > 0 && seen < maxNodes; depth++) {
    const byGroup = new Map<number, FlowTreeNode[]>();
    for (const node of level) byGroup.set(node.group, [...(byGroup.get(node.group) ?? []), node]);
    const next: FlowTreeNode[] = [];
    const found: FlowChild[] = [];
    const nodeOf = new Map<FlowChild, FlowTreeNode>();
    await Promise.all(
      [...byGroup].map(async ([group, nodes]) => {
        const data = await readParents(
          run,
          group,
          nodes.map((node) => node.id),
        );
        nodes.forEach((node, i) => {
          for (const child of data[i]?.children ?? []) {
            if (seen >= maxNodes) return;
            seen++;
            const { id, name, optional } = child;
            const entry: FlowTreeNode = {
              id,
              group: child.group,
              name,
              optional,
              state: 'unknown',
              children: [],
            };
            if (child.state !== 'pending') entry.state = child.state;
            if (child.error !== undefined) entry.error = child.error;
            node.children.push(entry);
            next.push(entry);
            found.push(child);
            nodeOf.set(child, entry);
          }
        });
      }),
    );
    // Ended ones are as their parent recorded them (their record may be gone, not kept).
    const pending = found.filter((child) => child.state === 'pending');
    for (const [child, state] of await statesOf(run, unitMs, pending)) {
      if (state !== '') (nodeOf.get(child) as FlowTreeNode).state = state as MessageState;
    }
    level = next;
  }
  return top;
}
