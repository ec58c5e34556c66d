// queue.list: pages of the messages in one state, over one group or all of them. Each group's
// part is one list.lua call that starts at the cursor's position (O(log n)) and reads at most
// the page's limit (or, with an id prefix, a scan budget) of entries: a page costs what its
// limit costs, never what the queue's length or the page's depth costs.
import { errors } from '../../base/errors.js';
import type { QueueConfig } from '../config.js';
import { checkGroup, checkInteger, checkObject, rejectUnknown } from '../options.js';
import { type PageOrder, pageOrder } from '../page-order.js';
import type { Unspill } from '../spill.js';
import {
  comparerOf,
  DEFAULT_ORDER,
  decodeListCursor,
  encodeListCursor,
  LIST_STATES,
  type ListPosition,
  type ListState,
  startArguments,
} from './cursor.js';
import { ITEM_FIELDS, type ListItem, listItem, type PlacedItem, PREVIEW_BYTES } from './item.js';

export type { ListState } from './cursor.js';
export type { ListItem } from './item.js';

/** What `queue.list(state, options)` reads: which group, how many, from where, which ids. */
export interface ListOptions {
  /** only this group (default: all) */
  group?: number;
  /** most items on the page (default 50, at most 500) */
  limit?: number;
  /** the previous page's cursor: this page starts after its last entry (null: the first page) */
  cursor?: string | null;
  /** only ids that start with this text */
  prefix?: string;
  /**
   * 'oldest' or 'newest' first in the state's time order; by default the cursor's, else newest
   * for done and dead and oldest for the others
   */
  order?: PageOrder;
}

/** How many messages each state holds (what list() would page through). */
export type StateCounts = Record<ListState, number>;

/** One page of `queue.list()`, and where the next one starts. */
export interface ListPage {
  /** the messages on this page, in the state's order */
  items: ListItem[];
  /** pass as `cursor` for the next page; null when this page reached the end */
  cursor: string | null;
}

/**
 * Entries a page looks at when an id prefix filters them, shared by the groups it reads (each
 * at least the page's limit): a filtered page costs about what a page of 2,000 costs.
 */
export const PREFIX_SCAN = 2000;
const MAX_LIMIT = 500;

type RunScript = (
  name: 'list' | 'list-counts',
  group: number,
  args: (string | number | Buffer)[],
) => Promise<(Buffer | number | null)[]>;

/** Reads the first bytes of spilled records' body keys (as DeadLetters' readStart). */
type ReadSpillStart = (
  group: number,
  records: unknown[],
  at: number,
  step: number,
  bytes: number,
) => Promise<void>;

interface GroupPart {
  items: PlacedItem[];
  /** the last entry this group looked at; null when it has nothing after it */
  frontier: ListPosition | null;
}

export class Browser {
  readonly #config: QueueConfig;
  readonly #run: RunScript;
  readonly #readStart: ReadSpillStart;

  constructor(config: QueueConfig, run: RunScript, readStart: ReadSpillStart | Unspill) {
    this.#config = config;
    this.#run = run;
    this.#readStart = readStart as ReadSpillStart;
  }

  /**
   * A page of `state`, in its order (delayed: by due time; ready: by priority and due time, then
   * the due ones of priority 0; active: by lease end; done: by finish; dead: by death), each
   * group merged into one order by that time, oldest or newest first (`order`; newest first is
   * the default for done and dead). With a prefix a page looks at about PREFIX_SCAN entries over
   * its groups: a page can then hold fewer items than its limit (even none) and still have a
   * cursor; follow it until it is null.
   */
  async list(state: ListState, options: ListOptions = {}): Promise<ListPage> {
    if (!LIST_STATES.includes(state)) {
      throw errors.invalidOption('state', `must be one of ${LIST_STATES.join(', ')}`, state);
    }
    const {
      group,
      limit = 50,
      cursor,
      prefix = '',
      order,
      ...rest
    } = checkObject('options', options);
    rejectUnknown('', rest);
    const count = checkInteger('limit', limit, 1, MAX_LIMIT);
    if (typeof prefix !== 'string') throw errors.invalidOption('prefix', 'must be text', prefix);
    if (prefix.length > 256) throw errors.invalidOption('prefix', 'must be at most 256 characters');
    const groups =
      group === undefined
        ? Array.from({ length: this.#config.groups }, (_, g) => g)
        : [checkGroup('group', group, this.#config.groups)];
    const from =
      cursor === undefined || cursor === null
        ? null
        : decodeListCursor(cursor, state, this.#config.groups);
    const reading = pageOrder(order, from?.order ?? null, DEFAULT_ORDER[state], 'cursor');
    const after = from?.position ?? null;
    const compare = comparerOf(reading);
    const budget = prefix === '' ? count : Math.max(count, Math.ceil(PREFIX_SCAN / groups.length));
    const parts = await Promise.all(
      groups.map((g) => this.#part(state, g, count, budget, prefix, after, reading)),
    );
    // Every entry up to the least advanced group's frontier was looked at in every group.
    const frontiers = parts.flatMap((p) => (p.frontier ? [p.frontier] : []));
    const edge = frontiers.sort(compare)[0] ?? null;
    const placed = parts
      .flatMap((p) => p.items)
      .filter((p) => edge === null || compare(p.position, edge) <= 0)
      .sort((a, b) => compare(a.position, b.position))
      .slice(0, count);
    // Every group read to its end, and all it had fit: nothing is after this page.
    const more = edge !== null || parts.reduce((n, p) => n + p.items.length, 0) > count;
    const last = !more ? null : placed.length === count ? placed.at(-1)?.position : edge;
    return {
      items: placed.map((p) => p.item),
      cursor: last ? encodeListCursor(state, last, reading) : null,
    };
  }

  /** How many messages each state holds, in one group or all (a few O(log n) reads a group). */
  async counts(group?: number): Promise<StateCounts> {
    const groups =
      group === undefined
        ? Array.from({ length: this.#config.groups }, (_, g) => g)
        : [checkGroup('group', group, this.#config.groups)];
    const ageMs = this.#config.hideDoneAfterMs;
    const replies = await Promise.all(
      groups.map((g) => this.#run('list-counts', g, [this.#config.unitMs, ageMs])),
    );
    const totals = { delayed: 0, ready: 0, active: 0, done: 0, dead: 0, waiting: 0 };
    for (const reply of replies) {
      LIST_STATES.forEach((state, i) => {
        totals[state] += Number(reply[i]);
      });
    }
    return totals;
  }

  async #part(
    state: ListState,
    group: number,
    count: number,
    budget: number,
    prefix: string,
    after: ListPosition | null,
    order: PageOrder,
  ): Promise<GroupPart> {
    const ageMs = this.#config.hideDoneAfterMs;
    const args = [this.#config.unitMs, state, count, budget, prefix, PREVIEW_BYTES, ageMs];
    const start = startArguments(group, after, order);
    const reply = await this.#run('list', group, [...args, ...start]);
    const [exhausted, phase, score, member] = reply;
    const flat = reply.slice(4);
    await this.#readStart(group, flat, 3, ITEM_FIELDS, PREVIEW_BYTES);
    const items: PlacedItem[] = [];
    for (let i = 0; i < flat.length; i += ITEM_FIELDS) {
      items.push(listItem(state, group, flat.slice(i, i + ITEM_FIELDS), this.#config.unitMs));
    }
    const frontier =
      Number(exhausted) === 1 || member === null
        ? null
        : { phase: Number(phase), score: String(score), group, member: member as Buffer };
    return { items, frontier };
  }
}
