// Dead letters: messages that failed their last attempt, whose lease expired
// on it, or whose record could not be read. Kept with reason and last error
// until retried or purged.

import type { ScriptName } from '../redis/scripts.js';
import type { QueueConfig } from './config.js';
import { checkGroup, checkInteger, checkLookupId } from './options.js';
import { type Body, decodeRecord, textOf } from './record.js';
import type { Unspill } from './spill.js';

export interface DeadLetter {
  /** the id (for ids that are not valid UTF-8, with \xNN escapes: use idBytes to act on them) */
  id: string;
  idBytes?: Buffer;
  group: number;
  diedAt: number;
  reason: string;
  lastError: string | null;
  /** deliveries made */
  attempts: number;
  /** the body, or the stored text when the record itself is unreadable */
  body: Body;
  /** the name it was added with, if any */
  name?: string;
}

/** Runs a script on a group; replies come as Buffers. */
type RunScript = (
  name: ScriptName,
  group: number,
  args: (string | number | Buffer)[],
) => Promise<unknown>;

export interface DeadLetterSelection {
  /** only this group (default: all) */
  group?: number;
  /** only these ids (default: all) */
  ids?: (string | Buffer)[];
}

const BATCH = 1000;
/** Most bytes of records one dead-list call reads: a page of big bodies comes in several calls. */
const PAGE_BYTES = 1024 * 1024;

export class DeadLetters {
  readonly #config: QueueConfig;
  readonly #run: RunScript;
  readonly #unspill: Unspill;

  constructor(config: QueueConfig, run: RunScript, unspill: Unspill) {
    this.#config = config;
    this.#run = run;
    this.#unspill = unspill;
  }

  /** Oldest first; without a group, the oldest `limit` over all groups. */
  async list(
    options: { group?: number; offset?: number; limit?: number } = {},
  ): Promise<DeadLetter[]> {
    const limit = checkInteger('limit', options.limit ?? 100, 1, 100_000);
    const offset = checkInteger('offset', options.offset ?? 0, 0, Number.MAX_SAFE_INTEGER);
    const groups = this.#groups(options.group);
    if (groups.length === 1) return this.#page(groups[0] as number, offset, limit);
    // The offset counts in the merged order: take each group's first offset + limit.
    const pages = await Promise.all(groups.map((group) => this.#page(group, 0, offset + limit)));
    return pages
      .flat()
      .sort((a, b) => a.diedAt - b.diedAt)
      .slice(offset, offset + limit);
  }

  /** Puts dead letters back to work (ready now, attempts reset); returns how many. */
  retry(selection: DeadLetterSelection = {}): Promise<number> {
    return this.#apply('dead-retry', selection);
  }

  /** Deletes dead letters for good; returns how many. */
  purge(selection: DeadLetterSelection = {}): Promise<number> {
    return this.#apply('dead-purge', selection);
  }

  async #apply(name: 'dead-retry' | 'dead-purge', selection: DeadLetterSelection): Promise<number> {
    const groups = this.#groups(selection.group);
    const ids = selection.ids?.map((id) => checkLookupId('ids', id));
    const counts = await Promise.all(
      groups.map(async (group) => {
        if (ids) {
          // The scripts ignore ids that are not dead letters of their group.
          let moved = 0;
          for (let i = 0; i < ids.length; i += BATCH) {
            moved += (await this.#run(name, group, ['ids', ...ids.slice(i, i + BATCH)])) as number;
          }
          return moved;
        }
        let total = 0;
        for (;;) {
          const moved = (await this.#run(name, group, ['*', BATCH])) as number;
          total += moved;
          if (moved < BATCH) return total;
        }
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async #page(group: number, offset: number, limit: number): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    // A call stops early once its records pass PAGE_BYTES: ask again from where it stopped.
    while (letters.length < limit) {
      const args = [offset + letters.length, limit - letters.length, PAGE_BYTES];
      const flat = (await this.#run('dead-list', group, args)) as (Buffer | null)[];
      await this.#unspill(group, flat, 2, 6);
      for (let i = 0; i < flat.length; i += 6)
        letters.push(deadLetter(group, flat.slice(i, i + 6)));
      if (flat.length === 0 || flat.length / 6 >= limit) break;
    }
    return letters;
  }

  #groups(group: number | undefined): number[] {
    if (group !== undefined) return [checkGroup('group', group, this.#config.groups)];
    return Array.from({ length: this.#config.groups }, (_, g) => g);
  }
}

function deadLetter(group: number, fields: (Buffer | null)[]): DeadLetter {
  const [id, diedAt, record, reason, lastError, attempts] = fields as [
    Buffer,
    ...(Buffer | null)[],
  ];
  let body: Body = record ? record.toString() : '';
  let name: string | undefined;
  try {
    // A raw member that died before it was ever leased has no record: its id is its body.
    const decoded = decodeRecord(id, record ?? Buffer.from('|0|1|f0|r'));
    body = decoded.body;
    name = decoded.name;
  } catch {
    // Unreadable records are dead letters for that very reason: show the stored text.
  }
  const text = textOf(id);
  return {
    id: text,
    ...(text === id.toString() ? {} : { idBytes: Buffer.from(id) }),
    group,
    diedAt: Number(String(diedAt)),
    reason: reason ? reason.toString() : 'unknown',
    lastError: lastError ? lastError.toString() : null,
    attempts: Number(String(attempts)),
    body,
    ...(name === undefined ? {} : { name }),
  };
}
