// Reading one message by its id: get() (inspect.lua's reply, spilled bodies read back, a flow
// parent's children counted), dedupeUntil() (the same script, its dedupe window only) and
// waitFor() (one Waiters reader per Queue, made on first use). Apart from queue.ts so the class
// stays its API and these lookups, which share how a reply is read, have one home.
import type { RedisClient } from '../redis/connection.js';
import type { ScriptName } from '../redis/scripts.js';
import type { QueueConfig } from './config.js';
import { onFirstGroup } from './first-group.js';
import { childCounts } from './flows/read.js';
import type { Args } from './group-scripts.js';
import {
  endingOf,
  type GetInfo,
  type WaitForOptions,
  type WaitResult,
  waitForJob,
} from './history/wait-for.js';
import { Waiters } from './history/waiters.js';
import { type MessageInfo, messageInfo } from './message-info.js';
import type { Unspill } from './spill.js';

type Run = (name: ScriptName, group: number, args: Args) => Promise<unknown>;

export interface ReadsParts {
  config: QueueConfig;
  client: RedisClient;
  /** the header a raw member (added by another program) is read with */
  rawHeader: string;
  /** Queue.run: plain replies */
  run: Run;
  /** the reply's strings as Buffers: ids and bodies keep their exact bytes */
  runBuffer: Run;
  unspill: Unspill;
  /** Queue.get, which waitFor reads through */
  get: GetInfo;
}

/** A Queue's reads by id: `queue.get`, `queue.dedupeUntil`, `queue.waitFor`. */
export class Reads {
  readonly #parts: ReadsParts;
  #waiters: Waiters | undefined;

  constructor(parts: ReadsParts) {
    this.#parts = parts;
  }

  /** See Queue.get. */
  async get(id: string | Buffer, options?: { group?: number }): Promise<MessageInfo | null> {
    const { config, rawHeader, runBuffer, unspill } = this.#parts;
    let found: MessageInfo | null = null;
    await onFirstGroup(config.groups, id, options, async (group, key) => {
      const ageMs = config.hideDoneAfterMs;
      const args = [config.unitMs, key, ageMs];
      const reply = (await runBuffer('inspect', group, args)) as (Buffer | number | null)[];
      if (!reply[0]) return false;
      await unspill(group, reply, 1, reply.length);
      const info = messageInfo(Buffer.from(key), group, reply, rawHeader);
      // A flow parent: its children counted by state (flows/read.ts), read only for parents.
      if (info.children) {
        const read = (name: 'flow-children' | 'flow-states', g: number, args: Args) =>
          runBuffer(name, g, args);
        info.children = (await childCounts(read, config.unitMs, group, info.id)) ?? info.children;
      }
      found = info;
      return true;
    });
    return found;
  }

  /** See Queue.dedupeUntil. */
  async dedupeUntil(id: string, options?: { group?: number }): Promise<number | null> {
    const { config, run } = this.#parts;
    let until: number | null = null;
    await onFirstGroup(config.groups, id, options, async (group, key) => {
      const args = [config.unitMs, key, 0];
      const reply = (await run('inspect', group, args)) as unknown[];
      const window = reply[0] ? reply[9] : reply[1];
      if (window === null || window === undefined) return false;
      until = Number(window);
      return true;
    });
    return until;
  }

  /** See Queue.waitFor. */
  waitFor(id: string, options: WaitForOptions): Promise<WaitResult> {
    const { client, config, get } = this.#parts;
    const waiters = () =>
      (this.#waiters ??= new Waiters(client, config.prefix, async (job, group) =>
        endingOf(await get(job, { group })),
      ));
    return waitForJob(get, waiters, id, options);
  }

  /** Ends waitFor's readers (the queue closes). */
  close(): void {
    this.#waiters?.close();
  }
}
