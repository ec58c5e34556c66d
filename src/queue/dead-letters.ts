// Dead letters: messages that failed their last attempt, whose lease expired
// on it, or whose record could not be read. Kept with reason and last error
// until retried or purged.

import { errors } from '../base/errors.js';
import type { ScriptName } from '../redis/scripts.js';
import type { QueueConfig } from './config.js';
import {
  comparerOf,
  type DeadPosition,
  decodeCursor,
  encodeCursor,
  startArguments,
} from './dead-cursor.js';
import { deadLetter, positionOf } from './dead-letter-row.js';
import { checkIds, checkKnown, scriptOf } from './dead-options.js';
import { checkGroup, checkInteger } from './options.js';
import { checkOrder, type PageOrder, pageOrder } from './page-order.js';
import type { Body } from './record.js';
import type { Unspill } from './spill.js';

/** A dead letter: a message that failed its last attempt (or could not be read), with why. */
export interface DeadLetter {
  /** the id (for ids that are not valid UTF-8, with \xNN escapes: use idBytes to act on them) */
  id: string;
  /** the id's exact bytes, when they are not valid UTF-8 */
  idBytes?: Buffer;
  /** its group */
  group: number;
  /** when it died (epoch ms, Redis clock) */
  diedAt: number;
  /** why it died */
  reason: string;
  /** the last error its handler threw, if any */
  lastError: string | null;
  /** deliveries made */
  attempts: number;
  /** the body, or the stored text when the record itself is unreadable (with previewBytes: its start) */
  body: Body;
  /** the name it was added with, if any */
  name?: string;
  /** with previewBytes: the body was cut to that many bytes */
  truncated?: boolean;
  /** with previewBytes: the stored record's size in bytes */
  recordBytes?: number;
}

/** One page of `queue.deadLetters.page()`, and where the next one starts. */
export interface DeadLetterPage {
  /** the letters, oldest death first */
  letters: DeadLetter[];
  /** pass as `after` for the next page; null when this page reached the end */
  next: string | null;
}

/** Which dead letters `page()` reads: a group, where to start, how many, how much of each body. */
export interface DeadLetterPageOptions {
  /** only this group (default: all) */
  group?: number;
  /** a page's `next`: start after the letter it ends with (null: the first page) */
  after?: string | null;
  /** most letters on the page (default 50) */
  limit?: number;
  /** bodies cut to this many bytes (a preview), without reading the rest of them */
  previewBytes?: number;
  /** 'newest' first (the default; or the order of `after`'s page) or 'oldest' first */
  order?: PageOrder;
}

/** Reads the first bytes of spilled records' body keys (group, nonce-bearing stubs, how many). */
export type ReadSpillStart = (
  group: number,
  records: unknown[],
  at: number,
  step: number,
  bytes: number,
) => Promise<void>;

/** Runs a script on a group; replies come as Buffers. */
type RunScript = (
  name: ScriptName,
  group: number,
  args: (string | number | Buffer)[],
) => Promise<unknown>;

/** Which dead letters `retry()`, `purge()` and `act()` act on: a group, some ids, or all. */
export interface DeadLetterSelection {
  /** only this group (default: all) */
  group?: number;
  /** only these ids (default: all) */
  ids?: (string | Buffer)[];
}

/** What act() did: how many dead letters it retried or purged, and the asked-for ids it did not find. */
export interface DeadLetterOutcome {
  /** how many dead letters it retried or purged */
  count: number;
  /** the ids asked for that were no dead letter */
  notFound: (string | Buffer)[];
}

const BATCH = 1000;
/** dead-list.lua's fields per letter */
const FIELDS = 7;
/** Most bytes of records one dead-list call reads: a page of big bodies comes in several calls. */
const PAGE_BYTES = 1024 * 1024;
/** Most letters one dead-list call answers (its ENTRIES). */
const ENTRIES_PER_CALL = 500;

/** The dead letters of a queue (`queue.deadLetters`): page through them, retry or purge them. */
export class DeadLetters {
  readonly #config: QueueConfig;
  readonly #run: RunScript;
  readonly #unspill: Unspill;
  readonly #readStart: ReadSpillStart;

  /** @internal made by the Queue */
  constructor(config: QueueConfig, run: RunScript, unspill: Unspill, readStart: ReadSpillStart) {
    this.#config = config;
    this.#run = run;
    this.#unspill = unspill;
    this.#readStart = readStart;
  }

  /**
   * Oldest first (or `order: 'newest'`); without a group, the first `limit` over all groups.
   * An offset works in one group (a rank: it costs what the limit costs); over all groups it
   * would cost what the offset costs, so it is refused there: page() goes by cursor instead.
   */
  async list(
    options: {
      group?: number;
      offset?: number;
      limit?: number;
      previewBytes?: number;
      order?: PageOrder;
    } = {},
  ): Promise<DeadLetter[]> {
    const o = checkKnown('options', options, ['group', 'offset', 'limit', 'previewBytes', 'order']);
    const limit = checkInteger('limit', o.limit ?? 100, 1, 100_000);
    const offset = checkInteger('offset', o.offset ?? 0, 0, Number.MAX_SAFE_INTEGER);
    const preview = this.#preview(o.previewBytes);
    const order = o.order === undefined ? 'oldest' : checkOrder('order', o.order);
    const groups = this.#groups(o.group);
    if (groups.length === 1)
      return this.#page(groups[0] as number, null, order, limit, preview, offset);
    if (offset > 0) {
      throw errors.invalidOption(
        'offset',
        'over all groups a page would cost what its offset costs: name a group, or page with deadLetters.page({ after: next })',
        offset,
      );
    }
    return (await this.page({ limit, previewBytes: preview, order })).letters;
  }

  /**
   * A page of dead letters, newest first (or `order: 'oldest'`), and the cursor of the next
   * one. Over several groups it reads each group's first `limit` ids past the cursor, merges
   * them, and then reads only the rows it shows (each group's share is the start of its own
   * order).
   */
  async page(options: DeadLetterPageOptions = {}): Promise<DeadLetterPage> {
    const o = checkKnown('options', options, ['group', 'after', 'limit', 'previewBytes', 'order']);
    const limit = checkInteger('limit', o.limit ?? 100, 1, 100_000);
    const preview = this.#preview(o.previewBytes);
    const cursor =
      o.after === undefined || o.after === null ? null : decodeCursor(o.after, this.#config.groups);
    const order = pageOrder(o.order, cursor?.order ?? null, 'newest', 'after');
    const after = cursor?.position ?? null;
    const compare = comparerOf(order);
    const groups = this.#groups(o.group);
    if (groups.length === 1) {
      // One group: its first `limit` are the page, read in one go.
      const letters = await this.#page(groups[0] as number, after, order, limit, preview);
      const last = letters.at(-1);
      const full = last && letters.length === limit;
      return { letters, next: full ? encodeCursor(positionOf(last), order) : null };
    }
    const ids = await Promise.all(groups.map((g) => this.#positions(g, after, order, limit)));
    const shown = ids.flat().sort(compare).slice(0, limit);
    const edge = shown.at(-1);
    const rows = await Promise.all(
      groups.map((g) => {
        const share = shown.filter((p) => p.group === g).length;
        return share === 0 ? [] : this.#page(g, after, order, share, preview);
      }),
    );
    // A letter that left meanwhile lets its group read one more, past the edge: the next page's.
    const letters = rows
      .flat()
      .filter((l) => edge && compare(positionOf(l), edge) <= 0)
      .sort((a, b) => compare(positionOf(a), positionOf(b)));
    return {
      letters,
      next: edge && shown.length === limit ? encodeCursor(edge, order) : null,
    };
  }

  /** The positions of a group's first `limit` letters past `after` (no record is read). */
  async #positions(
    group: number,
    after: DeadPosition | null,
    order: PageOrder,
    limit: number,
  ): Promise<DeadPosition[]> {
    const out: DeadPosition[] = [];
    let start = startArguments(group, after, order);
    while (out.length < limit) {
      const asked = limit - out.length;
      const flat = (await this.#run('dead-list', group, [
        asked,
        PAGE_BYTES,
        'ids',
        ...start,
      ])) as Buffer[];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        out.push({ diedAt: Number(String(flat[i + 1])), group, id: flat[i] as Buffer });
      }
      const last = out.at(-1);
      // A call answers at most ENTRIES_PER_CALL: fewer than that, and than asked, is the end.
      if (!last || flat.length / 2 < Math.min(asked, ENTRIES_PER_CALL)) break;
      start = startArguments(group, last, order);
    }
    return out;
  }

  /** Puts dead letters back to work (ready now, attempts reset); returns how many. */
  async retry(selection: DeadLetterSelection = {}): Promise<number> {
    return (await this.act('retry', selection)).count;
  }

  /** Deletes dead letters for good; returns how many. */
  async purge(selection: DeadLetterSelection = {}): Promise<number> {
    return (await this.act('purge', selection)).count;
  }

  /** retry() or purge(), also naming the ids of `selection.ids` that were no dead letter. */
  async act(
    action: 'retry' | 'purge',
    selection: DeadLetterSelection = {},
  ): Promise<DeadLetterOutcome> {
    const script = scriptOf(action);
    const chosen = checkKnown('selection', selection, ['group', 'ids']);
    const groups = this.#groups(chosen.group);
    const ids = checkIds(chosen.ids);
    if (!ids) {
      const counts = await Promise.all(groups.map((group) => this.#applyAll(script, group)));
      return { count: counts.reduce((a, b) => a + b, 0), notFound: [] };
    }
    // Each group's script answers the ids it found among its dead letters.
    const found = new Set<string>();
    await Promise.all(
      groups.map(async (group) => {
        for (let i = 0; i < ids.length; i += BATCH) {
          const acted = (await this.#run(script, group, [
            'ids',
            ...ids.slice(i, i + BATCH),
          ])) as Buffer[];
          for (const id of acted) found.add(id.toString('latin1'));
        }
      }),
    );
    // Compared as bytes: Redis answers Buffers, and an id may be given as one.
    const key = (id: string | Buffer) => Buffer.from(id).toString('latin1');
    const missing = new Map<string, string | Buffer>();
    for (const id of ids) if (!found.has(key(id))) missing.set(key(id), id);
    return { count: found.size, notFound: [...missing.values()] };
  }

  async #applyAll(script: 'dead-retry' | 'dead-purge', group: number): Promise<number> {
    let total = 0;
    for (;;) {
      const moved = (await this.#run(script, group, ['*', BATCH])) as number;
      total += moved;
      if (moved < BATCH) return total;
    }
  }

  async #page(
    group: number,
    after: DeadPosition | null,
    order: PageOrder,
    limit: number,
    preview: number,
    offset = 0,
  ): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    let start = startArguments(group, after, order, offset);
    // A call stops early once its records pass PAGE_BYTES: ask again after its last letter.
    while (letters.length < limit) {
      const args = [limit - letters.length, PAGE_BYTES, preview, ...start];
      const flat = (await this.#run('dead-list', group, args)) as (Buffer | null)[];
      if (preview > 0) await this.#readStart(group, flat, 2, FIELDS, preview);
      else await this.#unspill(group, flat, 2, FIELDS);
      for (let i = 0; i < flat.length; i += FIELDS)
        letters.push(deadLetter(group, flat.slice(i, i + FIELDS), preview));
      const last = letters.at(-1);
      if (!last || flat.length === 0 || flat.length / FIELDS >= limit) break;
      start = startArguments(group, positionOf(last), order);
    }
    return letters;
  }

  #preview(bytes: unknown): number {
    return bytes === undefined || bytes === 0
      ? 0
      : checkInteger('previewBytes', bytes, 1, 1024 * 1024);
  }

  #groups(group: unknown): number[] {
    if (group !== undefined) return [checkGroup('group', group, this.#config.groups)];
    return Array.from({ length: this.#config.groups }, (_, g) => g);
  }
}
