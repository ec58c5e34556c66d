// A flow's tree as the caller gives it, checked and laid out flat (pre-order: every parent
// before its children), with each node's group: its own `group` or `key` when it names one,
// else its parent's (so a tree without them is one group, one slot, one script call); a root
// with neither goes to its caller id's home group, or to the queue's next group.
import { errors, type FlowIds } from '../../base/errors.js';
import { hashString, homeGroup } from '../../base/keys.js';
import type { AddOptions } from '../add-options.js';
import type { QueueConfig } from '../config.js';
import { checkGroup, checkName, checkObject, rejectUnknown } from '../options.js';
import type { Body } from '../record.js';

/** A node's options: add()'s, without `name` (a node field) and `dedupeMs` (no window in a flow). */
export type FlowNodeOptions = Omit<AddOptions, 'name' | 'dedupeMs'>;

/** One node of a flow: a job, and the children it waits for (a leaf has none). */
export interface FlowSpec<B = Body> {
  /** the job's body, as add() takes it (up to 64 KiB stored) */
  body: B;
  /** the job's name (`job.name`; a command table routes on it) */
  name?: string;
  /** add()'s options: when it is due (a parent: not before), priority, id, group or key... */
  options?: FlowNodeOptions;
  /** the jobs this one waits for: it runs once every one has ended */
  children?: FlowChildSpec<B>[];
}

/** A child node: a FlowSpec that may be optional. */
export interface FlowChildSpec<B = Body> extends FlowSpec<B> {
  /** its death does not make its parent dead: the parent runs with its entry dead */
  optional?: boolean;
}

export type { FlowIds };

/** Most nodes in one flow, and its deepest level (a death cascades through every level). */
export const MAX_FLOW_NODES = 10_000;
export const MAX_FLOW_DEPTH = 20;

/** One node, laid out: where its parent and children are, its group, its checked input. */
export interface FlowNode {
  /** its place in the flat list (pre-order) */
  index: number;
  /** the parent's index; -1 for the root */
  parent: number;
  /** the children's indexes, in the order given */
  children: number[];
  depth: number;
  optional: boolean;
  /** its group; -1 until resolveGroups gives it its parent's (or the root the queue's pick) */
  group: number;
  /** the caller's id, or '' for a generated one */
  callerId: string;
  /** the options and body, for add-options.ts prepareMessage (with `name` put back) */
  body: unknown;
  options: Record<string, unknown>;
  name: string | undefined;
  /** where this node's error names it: `flow`, `flow.children[2]`... */
  field: string;
}

/** Checks the tree (shape, sizes, names, groups) and lays it out; throws on the first fault. */
export function layOut(config: QueueConfig, spec: unknown): FlowNode[] {
  const nodes: FlowNode[] = [];
  const ids = new Set<string>();
  const visit = (value: unknown, parent: FlowNode | null, field: string, depth: number) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw errors.invalidOption(field, 'must be { body, name?, options?, children? }', value);
    const { body, name, options, children, optional, ...rest } = value as Record<string, unknown>;
    rejectUnknown(field, rest);
    if (!('body' in value)) throw errors.invalidOption(`${field}.body`, 'is missing');
    if (depth > MAX_FLOW_DEPTH)
      throw errors.invalidOption(field, `is deeper than ${MAX_FLOW_DEPTH} levels`);
    if (nodes.length >= MAX_FLOW_NODES)
      throw errors.invalidOption('flow', `has more than ${MAX_FLOW_NODES} nodes`);
    if (optional !== undefined && typeof optional !== 'boolean')
      throw errors.invalidOption(`${field}.optional`, 'must be true or false', optional);
    if (optional !== undefined && parent === null)
      throw errors.invalidOption(`${field}.optional`, 'is for children: the root has no parent');
    const checked = { ...checkObject(`${field}.options`, options) };
    if (checked.name !== undefined)
      throw errors.invalidOption(`${field}.options.name`, 'give the name beside the body');
    if (checked.dedupeMs !== undefined)
      throw errors.invalidOption(`${field}.options.dedupeMs`, 'flows take no dedupe window');
    const node: FlowNode = {
      index: nodes.length,
      parent: parent ? parent.index : -1,
      children: [],
      depth,
      optional: optional === true,
      group: placement(config, checked, parent, field),
      callerId: typeof checked.id === 'string' ? checked.id : '',
      body,
      options: checked,
      name: name === undefined ? undefined : checkName(`${field}.name`, name),
      field,
    };
    if (node.callerId !== '') {
      if (ids.has(node.callerId))
        throw errors.invalidOption(
          `${field}.options.id`,
          'is given twice in this flow',
          node.callerId,
        );
      ids.add(node.callerId);
    }
    nodes.push(node);
    parent?.children.push(node.index);
    if (children === undefined) return;
    if (!Array.isArray(children))
      throw errors.invalidOption(`${field}.children`, 'must be an array', children);
    children.forEach((child, i) => {
      visit(child, node, `${field}.children[${i}]`, depth + 1);
    });
  };
  visit(spec, null, 'flow', 1);
  return nodes;
}

/**
 * A node's group: the one it names (group, or key hashed), else its parent's; a root with
 * neither goes to its caller id's home group, or -1 (the queue picks one).
 */
function placement(
  config: QueueConfig,
  options: Record<string, unknown>,
  parent: FlowNode | null,
  field: string,
): number {
  const { group, key, id } = options;
  if (group !== undefined) return checkGroup(`${field}.options.group`, group, config.groups);
  if (key !== undefined) {
    if (typeof key !== 'string' || key.length === 0)
      throw errors.invalidOption(`${field}.options.key`, 'must be a non-empty string', key);
    return hashString(key) % config.groups;
  }
  if (parent) return -1;
  return typeof id === 'string' && id !== '' ? homeGroup(id, config.groups) : -1;
}

/** Gives the root `pick()` when it has no group, and every node without one its parent's. */
export function resolveGroups(nodes: FlowNode[], pick: () => number): void {
  for (const node of nodes) {
    if (node.group !== -1) continue;
    node.group = node.parent === -1 ? pick() : (nodes[node.parent] as FlowNode).group;
  }
}

/** The ids in the tree's shape, from the node at `index`. */
export function idTree(nodes: FlowNode[], ids: string[], index = 0): FlowIds {
  const node = nodes[index] as FlowNode;
  return {
    id: ids[index] as string,
    children: node.children.map((child) => idTree(nodes, ids, child)),
  };
}
