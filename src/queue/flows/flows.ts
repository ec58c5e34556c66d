// queue.flows: jobs that wait for jobs. A flow is a tree: a parent runs once every child has
// ended (done; or, for an optional child, dead or cancelled), and sees each child's outcome.
//
// Design (the Lua half, and the data, are described at the top of lua/flow-lib.lua):
// - Adding (add.ts): ids are given client-side first; parents are stored before their
//   children, waiting (the waiting set) with a count of children left; a failure part-way
//   throws a FlowAddError whose retry() completes the flow under the same ids.
// - A child's record carries its parent's ref as a tag, a parent's its number of children, so
//   the claim reads nothing more; the client tells the ack which acked ids are flow members
//   (message.ts ackArgs), and a message of no flow costs its ack nothing.
// - Within one slot (the default: children live in their parent's group) a child's end and its
//   parent's update are one script call. Across slots (a child given its own group or key) the
//   child's slot keeps an outbox that relay.ts moves into the parent's slot, idempotently.
// - A parent claimed by the runtime gets its children's outcomes (flow-children.lua, one call
//   for it) before its handler starts: `job.children`.
// - Cancel (cancel.ts): a parent's pending children go with it; a mandatory child of a waiting
//   parent is refused.
import type { FlowIds } from '../../base/errors.js';
import type { Message } from '../message.js';
import type { MessageState } from '../message-info.js';
import { checkGroup, checkLookupId, checkObject } from '../options.js';
import { addFlow, type FlowAddContext } from './add.js';
import type { FlowChild } from './outcome.js';
import {
  type FlowTreeNode,
  type ParentData,
  type ReadScript,
  readParents,
  readStates,
  readTree,
} from './read.js';
import { FlowRelay, type RelayRound, type RelayScript } from './relay.js';
import type { FlowSpec } from './tree.js';

export type { FlowChild, FlowChildState } from './outcome.js';
export type { FlowTreeNode, ParentData } from './read.js';
export type { RelayRound } from './relay.js';
export type { FlowChildSpec, FlowNodeOptions, FlowSpec } from './tree.js';

export interface FlowsParts {
  adder: FlowAddContext;
  read: ReadScript;
  relay: RelayScript;
  unitMs: number;
  groups: number;
  /** where an id is and what it is called (queue.get) */
  find(id: string, group?: number): Promise<FoundNode | null>;
}

/** What flows.get starts from: one node, found by queue.get. */
export interface FoundNode {
  id: string;
  group: number;
  name: string | undefined;
  state: MessageState;
}

/** Flows of a queue: `queue.flows`. */
export class Flows<B = unknown> {
  readonly #parts: FlowsParts;
  /** @internal moves outcomes across slots (see relay.ts) */
  readonly relay: FlowRelay;

  constructor(parts: FlowsParts) {
    this.#parts = parts;
    this.relay = new FlowRelay(parts.relay);
  }

  /**
   * Adds a tree of jobs: each parent runs once all its children have ended (see the README,
   * Flows). Resolves the ids in the tree's shape once every node is stored; rejects with a
   * FlowAddError (retry() completes it) when some calls failed, or with the reason for bad input.
   */
  add(flow: FlowSpec<B>): Promise<FlowIds> {
    return addFlow(this.#parts.adder, flow);
  }

  /**
   * A flow parent's children in the order given, with how each ended and its result: what the
   * runtime sets as `job.children` before a parent's handler starts. [] for a message that is
   * no flow parent, or whose flow data is gone.
   */
  async children(message: Pick<Message, 'id' | 'group'>): Promise<FlowChild[]> {
    // A JavaScript caller passing the id alone got a TypeError from deep in the script runner.
    const { id, group } = checkObject('message', message);
    checkLookupId('message.id', id);
    const at = checkGroup('message.group', group, this.#parts.groups);
    const [data] = await readParents(this.#parts.read, at, [message.id], 'all');
    return data?.children ?? [];
  }

  /** A parent's flow data (children, outcomes with results, its own parent); null when none. */
  async parent(id: string, group: number): Promise<ParentData | null> {
    checkLookupId('id', id);
    checkGroup('group', group, this.#parts.groups);
    const [data] = await readParents(this.#parts.read, group, [id], 'all');
    return data ?? null;
  }

  /**
   * A flow's tree from the node `id` down (each node's state and name, and a dead child's error
   * as its parent recorded it; results are in each job's own get()), at most `maxNodes` nodes;
   * null for an unknown id.
   */
  async get(
    id: string,
    options: { group?: number; maxNodes?: number } = {},
  ): Promise<FlowTreeNode | null> {
    const root = await this.#parts.find(id, options.group);
    if (!root) return null;
    return readTree(this.#parts.read, this.#parts.unitMs, root, options.maxNodes);
  }

  /** Where `id` stands in `group` ('' when it is not there). */
  async stateOf(id: string, group: number): Promise<string> {
    const [state] = await readStates(this.#parts.read, this.#parts.unitMs, group, [id]);
    return state ?? '';
  }

  /**
   * Relays `group`'s outbox now (what every launcher's actors do every few seconds): outcomes
   * of children whose parents live in other groups.
   */
  sweep(group: number): Promise<RelayRound> {
    return this.relay.round(group);
  }
}
