// Dead letters: messages that failed their last attempt, whose lease expired
// on it, or whose record could not be read. Kept with reason and last error
// until retried or purged.
import type { QueueConfig } from './config.js';
import { checkGroup, checkId, checkInteger } from './options.js';
import { type Body, decodeRecord } from './record.js';
import type { ScriptName } from './redis/scripts.js';

export interface DeadLetter {
  id: string;
  group: number;
  diedAt: number;
  reason: string;
  lastError: string | null;
  /** deliveries made */
  attempts: number;
  /** the body, or the stored text when the record itself is unreadable */
  body: Body;
}

type RunScript = (name: ScriptName, group: number, args: (string | number)[]) => Promise<unknown>;

export interface DeadLetterSelection {
  /** only this group (default: all) */
  group?: number;
  /** only these ids (default: all) */
  ids?: string[];
}

const BATCH = 1000;

export class DeadLetters {
  readonly #config: QueueConfig;
  readonly #run: RunScript;

  constructor(config: QueueConfig, run: RunScript) {
    this.#config = config;
    this.#run = run;
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
    const ids = selection.ids?.map((id) => checkId('ids', id));
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
          // dead-retry leaves unreadable records in place, so a short batch is not the end.
          if (moved === 0 || (name === 'dead-purge' && moved < BATCH)) return total;
        }
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async #page(group: number, offset: number, limit: number): Promise<DeadLetter[]> {
    const flat = (await this.#run('dead-list', group, [offset, limit])) as (string | false)[];
    const letters: DeadLetter[] = [];
    for (let i = 0; i < flat.length; i += 6) {
      const id = String(flat[i]);
      const record = flat[i + 2] || '';
      let body: Body = record;
      try {
        body = decodeRecord(id, record).body;
      } catch {
        // Unreadable records are dead letters for that very reason: show the raw text.
      }
      letters.push({
        id,
        group,
        diedAt: Number(flat[i + 1]),
        reason: flat[i + 3] || 'unknown',
        lastError: flat[i + 4] || null,
        attempts: Number(flat[i + 5]),
        body,
      });
    }
    return letters;
  }

  #groups(group: number | undefined): number[] {
    if (group !== undefined) return [checkGroup('group', group, this.#config.groups)];
    return Array.from({ length: this.#config.groups }, (_, g) => g);
  }
}
