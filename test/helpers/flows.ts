/**
 * Helpers for the flow suites: trees of a given shape, and the checks every flow run must pass
 * against what test/fixtures/flow-record.mjs (or the fault suite's tally) recorded: every
 * parent ran, none twice, none before its last child finished, with its children in order.
 */
import { expect } from 'vitest';
import type { Body, FlowIds, FlowNodeOptions, FlowSpec } from '../../src/index.js';

/** One recorded run (flow-record.mjs). */
export interface FlowRun {
  id: string;
  g: number;
  a: number;
  s: number;
  t: number;
  p: number;
  children?: [id: string, state: string, result: unknown, error: unknown][];
}

/**
 * A tree of depth 3: a root with `width` children, each with `width` leaves. `place(level, i)`
 * gives a node's options (its group or key), `body(level, i)` its body.
 */
export function tree3(
  width: number,
  place: (level: number, i: number) => FlowNodeOptions = () => ({}),
  body: (level: number, i: number) => Body = () => ({}),
): FlowSpec<Body> {
  let n = 0;
  const node = (level: number): FlowSpec<Body> => {
    const i = n++;
    const spec: FlowSpec<Body> = { body: body(level, i), options: place(level, i) };
    if (level < 3) spec.children = Array.from({ length: width }, () => node(level + 1));
    return spec;
  };
  return node(1);
}

/** Every node of a flow's ids, with its parent (null for the root), in tree order. */
export function nodesOf(
  ids: FlowIds,
  parent: FlowIds | null = null,
): { node: FlowIds; parent: FlowIds | null }[] {
  return [{ node: ids, parent }, ...ids.children.flatMap((child) => nodesOf(child, ids))];
}

/**
 * The runs of a finished flow whose every node succeeds: each node ran exactly once (or, with
 * `atLeastOnce`, each leaf at least once and each parent once), no parent started before its
 * last child finished, and each parent saw its children in order, done, with their results.
 */
export function expectFlowRan(ids: FlowIds, runs: FlowRun[], atLeastOnce = false): void {
  const byId = new Map<string, FlowRun[]>();
  for (const run of runs) byId.set(run.id, [...(byId.get(run.id) ?? []), run]);
  const problems: string[] = [];
  for (const { node } of nodesOf(ids)) {
    const mine = byId.get(node.id) ?? [];
    const isParent = node.children.length > 0;
    if (mine.length === 0) problems.push(`${node.id} never ran`);
    else if (mine.length > 1 && (isParent || !atLeastOnce))
      problems.push(`${node.id} ran ${mine.length} times`);
    if (!isParent || mine.length === 0) continue;
    const run = mine[0] as FlowRun;
    for (const child of node.children) {
      const last = Math.max(...(byId.get(child.id) ?? []).map((r) => r.t));
      if (run.s < last)
        problems.push(
          `${node.id} started ${last - run.s} ms before its child ${child.id} finished`,
        );
    }
    const seen = (run.children ?? []).map(([id, state, result]) => `${id} ${state} ${result}`);
    const wanted = node.children.map((child) => `${child.id} done r:${child.id}`);
    if (JSON.stringify(seen) !== JSON.stringify(wanted))
      problems.push(`${node.id} saw its children as ${JSON.stringify(seen.slice(0, 3))}…`);
  }
  expect(problems.slice(0, 10)).toEqual([]);
}
