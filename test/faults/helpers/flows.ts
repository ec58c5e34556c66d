/**
 * Flows for the fault suite: trees of depth 3 spread over the groups, and the checks a fault
 * must not break, from the tally's record: every node ran (0 lost), no parent started before
 * the last finish of any of its children, each saw every child done, and a node ran more than
 * once only when it was leased at a fault (at-least-once, as any message), each run a later
 * attempt (a parent released twice would run as the same one).
 */
import { expect } from 'vitest';
import { keyOf } from '../../../src/base/keys.js';
import type { FlowIds, FlowSpec, Queue } from '../../../src/index.js';
import { nodesOf } from '../../helpers/flows.js';
import { type Finish, hexOf } from './tally.js';

/**
 * Flow number `f` of depth 3 (4 × 4 leaves): the root in group f % groups, half the middle
 * level in its group and half placed by key, half of each one's leaves in another group; each
 * node with `attempts` deliveries when given.
 */
export function spreadFlow(
  f: number,
  groups: number,
  body: FlowSpec['body'],
  attempts?: number,
): FlowSpec {
  const every = attempts === undefined ? {} : { attempts };
  const leaf = (m: number, l: number): FlowSpec => ({
    body,
    options: l % 2 === 0 ? every : { ...every, group: (f + m + l) % groups },
  });
  const mid = (m: number): FlowSpec => ({
    body,
    options: m % 2 === 0 ? every : { ...every, key: `flow-${f}-${m}` },
    children: Array.from({ length: 4 }, (_, l) => leaf(m, l)),
  });
  return {
    body,
    options: { ...every, group: f % groups },
    children: Array.from({ length: 4 }, (_, m) => mid(m)),
  };
}

export interface FlowAccount {
  nodes: number;
  parents: number;
  /** parents that ran more than once (each was leased at a fault) */
  parentsTwice: number;
  /** the least time between a parent's start and its last child's finish (ms) */
  closestMs: number;
}

/**
 * The flow checks over every flow's ids against the finishes; `leased`: hex ids leased at a
 * fault (the only ones that may run twice).
 */
export function expectFlowsHeld(
  flows: FlowIds[],
  finishes: readonly Finish[],
  leased: ReadonlySet<string>,
): FlowAccount {
  const byHex = new Map<string, Finish[]>();
  for (const finish of finishes) byHex.set(finish.h, [...(byHex.get(finish.h) ?? []), finish]);
  const problems: string[] = [];
  const account = { nodes: 0, parents: 0, parentsTwice: 0, closestMs: Number.POSITIVE_INFINITY };
  for (const flow of flows) {
    for (const { node } of nodesOf(flow)) {
      account.nodes++;
      const runs = byHex.get(hexOf(node.id)) ?? [];
      if (runs.length === 0) problems.push(`${node.id} never ran`);
      if (runs.length > 1 && !leased.has(hexOf(node.id)))
        problems.push(`${node.id} ran ${runs.length} times, not leased at a fault`);
      // A run again after a fault is a lease that expired: it counts an attempt. A parent
      // released twice would run again as attempt 1.
      const attempts = runs.map((run) => run.a);
      if (new Set(attempts).size !== attempts.length)
        problems.push(`${node.id} ran twice as the same attempt (${attempts.join(', ')})`);
      if (node.children.length === 0 || runs.length === 0) continue;
      account.parents++;
      if (runs.length > 1) account.parentsTwice++;
      const start = Math.min(...runs.map((run) => run.s));
      for (const child of node.children) {
        const last = Math.max(...(byHex.get(hexOf(child.id)) ?? []).map((run) => run.t));
        if (start < last)
          problems.push(`${node.id} started ${last - start} ms before ${child.id} finished`);
        account.closestMs = Math.min(account.closestMs, start - last);
      }
      for (const run of runs) {
        if (run.c !== 'd'.repeat(node.children.length))
          problems.push(`${node.id} saw its children as ${run.c}`);
      }
    }
  }
  expect(problems.slice(0, 10)).toEqual([]);
  return account;
}

/**
 * Per group: the outcomes its outbox holds for a relay (or its confirmation), and the parents its
 * waiting set holds. Both empty once every flow ended and the sweeps confirmed every relay.
 */
export async function flowLeftovers(
  queue: Queue,
  prefix: string,
  groups: number,
): Promise<{ outbox: number; waiting: number }[]> {
  return Promise.all(
    Array.from({ length: groups }, async (_, g) => ({
      outbox: await queue.client.hlen(keyOf(prefix, g, 'outbox')),
      waiting: await queue.client.zcard(keyOf(prefix, g, 'waiting')),
    })),
  );
}

/**
 * Runs `wait` (the tally's wait for every node); when it fails, its error also tells where each
 * unfinished node of `flows` is (up to 40 of them) and what each group's outbox and waiting set
 * hold, so a run that leaves a flow behind says how.
 */
export async function explainingUnfinished<T>(
  queue: Queue,
  flows: FlowIds[],
  prefix: string,
  groups: number,
  wait: () => Promise<T>,
): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    const lines: string[] = [];
    let notFound = 0; // finished and trimmed from the history since, or never stored
    for (const flow of flows) {
      for (const { node } of nodesOf(flow)) {
        if (lines.length >= 40) break;
        const info = await queue.get(node.id);
        if (info === null) notFound++;
        if (info === null || info.state === 'done') continue;
        const children = info.children ? ` children ${JSON.stringify(info.children)}` : '';
        const why = info.deadReason ?? info.lastError;
        const reason = why ? ` (${String(why).slice(0, 120)})` : '';
        lines.push(`${node.id}: ${info.state}${reason}${children} (root ${flow.id})`);
      }
    }
    lines.push(`${notFound} nodes not found (trimmed from the history, or never stored)`);
    for (const [g, { outbox, waiting }] of (await flowLeftovers(queue, prefix, groups)).entries())
      lines.push(`group ${g}: outbox ${outbox}, waiting ${waiting}`);
    throw new Error(`${(error as Error).message}\n${lines.join('\n')}`, { cause: error });
  }
}
