// Generated ids are "<group>:<length letter><n in base36>" (keys.ts), n from
// the group's seq counter. The producer reserves n in blocks with one call
// (lua/id-block.lua, which keeps the counter above Redis's clock, so an id is never
// generated twice, even after Redis lost its data), so add.lua does no number
// formatting (slow in Lua).
import { generatedId } from '../base/keys.js';

/** Reserves `count` numbers of a group's counter; resolves the last of them. */
export type ReserveIds = (group: number, count: number) => Promise<number>;

const MIN_BLOCK = 1000;

interface Block {
  next: number;
  end: number;
}

export class IdBlocks {
  readonly #reserveIds: ReserveIds;
  readonly #blocks = new Map<number, Block>();
  readonly #reserving = new Map<number, Promise<void>>();

  constructor(reserve: ReserveIds) {
    this.#reserveIds = reserve;
  }

  /** `count` new ids for `group`, unique across every producer. */
  async take(group: number, count: number): Promise<string[]> {
    const ids: string[] = [];
    while (ids.length < count) {
      const block = this.#blocks.get(group);
      if (!block || block.next > block.end) {
        await this.#reserve(group, count - ids.length);
        continue;
      }
      const last = Math.min(block.end, block.next + count - ids.length - 1);
      for (let n = block.next; n <= last; n++) ids.push(generatedId(group, n));
      block.next = last + 1;
    }
    return ids;
  }

  /** Forgets the group's block: add.lua found one of its ids taken (the counter went back). */
  discard(group: number): void {
    this.#blocks.delete(group);
  }

  #reserve(group: number, wanted: number): Promise<void> {
    let pending = this.#reserving.get(group);
    if (!pending) {
      const size = Math.max(MIN_BLOCK, wanted);
      pending = this.#reserveIds(group, size)
        .then((end) => {
          this.#blocks.set(group, { next: end - size + 1, end });
        })
        .finally(() => this.#reserving.delete(group));
      this.#reserving.set(group, pending);
    }
    return pending;
  }
}
