// queue.waitFor(): many waiters, one reader per group. Scripts that end jobs add one entry to
// the group's event stream ({prefix:g}:fin, lua/events.lua: done, dead and cancelled events
// are written whether events are on or not) per call; while anyone waits on a
// group, one connection of its own blocks in XREAD on that stream and settles the waiters of
// the ids it names (and tells them of progress: report.lua always writes it there too). No waiter polls: a waiter costs a map entry and one timer.
//
// Nothing is missed: a waiter is registered, then the reader's position is fixed (from then on
// every entry is seen), and only then is the job's state read once; an end before that shows
// in the state (a kept history), an end after it in the stream. A reader that lost its
// connection reads on from where it was (the stream keeps ~1,000 entries), and reads every
// waiter's state again in case it was away longer than that.
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../../base/errors.js';
import { keyOf } from '../../base/keys.js';
import { blockingCopy, type RedisClient } from '../../redis/connection.js';
import { eventsOf } from '../events/event.js';

export type Ending = 'done' | 'dead' | 'cancelled';

/** What a finished job's state says, or null while it has not ended. */
export type Check = (id: string, group: number) => Promise<'done' | 'dead' | 'gone' | null>;

interface Waiter {
  settle(ending: Ending | 'gone'): void;
  /** the stream holds data this skyq cannot read (a newer format) */
  fail(error: unknown): void;
  /** the job reported progress (waitFor's onProgress) */
  progress?: (value: unknown) => void;
}

/** How long one XREAD blocks: short enough to notice that nobody waits any more. */
const BLOCK_MS = 5000;

class GroupReader {
  readonly waiters = new Map<string, Set<Waiter>>();
  readonly #stream: string;
  readonly #client: RedisClient;
  readonly #check: Check;
  readonly #group: number;
  #cursor: string | null = null;
  readonly ready: Promise<void>;
  #stopped = false;

  constructor(client: RedisClient, stream: string, group: number, check: Check) {
    this.#client = client;
    this.#stream = stream;
    this.#group = group;
    this.#check = check;
    this.ready = this.#start();
  }

  get idle(): boolean {
    return this.waiters.size === 0;
  }

  /** Once: ioredis adds a listener to the socket at each disconnect(). */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#client.disconnect();
  }

  async #start(): Promise<void> {
    const last = (await this.#client.xrevrange(this.#stream, '+', '-', 'COUNT', 1)) as [
      string,
      string[],
    ][];
    this.#cursor = last[0]?.[0] ?? '0-0';
    void this.#loop();
  }

  // Reads until stopped, idle or not: a waiter may join between the settle that left the reader
  // idle and the stop (Waiters.wait's finally), and must still be read for.
  async #loop(): Promise<void> {
    let failures = 0;
    while (!this.#stopped) {
      try {
        const reply = (await this.#client.xreadBuffer(
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          this.#stream,
          this.#cursor as string,
        )) as [Buffer, [Buffer, Buffer[]][]][] | null;
        if (failures > 0) await this.#recheck(); // away for a while: the stream may be trimmed
        failures = 0;
        for (const [, entries] of reply ?? []) {
          for (const [entryId, fields] of entries) {
            this.#cursor = entryId.toString('latin1');
            for (const event of this.#eventsOf(fields)) {
              if (event.type === 'done' || event.type === 'dead')
                this.#settle(event.id, event.type);
              else if (event.type === 'cancelled') void this.#cancelled(event.id);
              else if (event.type === 'progress') this.#progress(event.id, event.progress);
            }
          }
        }
      } catch {
        if (this.#stopped) return;
        failures += 1;
        await sleep(Math.min(1000, 100 * failures));
      }
    }
  }

  /** An entry's events; one of a newer format fails every waiter of the group, misread by none. */
  #eventsOf(fields: Buffer[]) {
    try {
      return eventsOf(this.#group, this.#cursor as string, fields, this.#stream);
    } catch (error) {
      for (const [id, waiting] of this.waiters) {
        this.waiters.delete(id);
        for (const waiter of waiting) waiter.fail(error);
      }
      return [];
    }
  }

  /**
   * A cancel ends the job unless its id is there again: a schedule's change may replace its
   * waiting occurrence by one of the same id in the same call, and an id may be added anew.
   */
  async #cancelled(id: string): Promise<void> {
    if (!this.waiters.has(id)) return;
    const now = await this.#check(id, this.#group).catch(() => 'gone' as const);
    if (now === 'gone') this.#settle(id, 'cancelled');
    else if (now) this.#settle(id, now);
  }

  #progress(id: string, value: unknown): void {
    for (const waiter of this.waiters.get(id) ?? []) {
      try {
        waiter.progress?.(value);
      } catch {
        // the caller's callback: its failure is not the reader's
      }
    }
  }

  #settle(id: string, ending: Ending | 'gone'): void {
    const waiting = this.waiters.get(id);
    if (!waiting) return;
    this.waiters.delete(id);
    for (const waiter of waiting) waiter.settle(ending);
  }

  async #recheck(): Promise<void> {
    for (const id of [...this.waiters.keys()]) {
      const ending = await this.#check(id, this.#group).catch(() => null);
      if (ending) this.#settle(id, ending);
    }
  }
}

export class Waiters {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #check: Check;
  readonly #readers = new Map<number, GroupReader>();
  #closed = false;

  constructor(client: RedisClient, prefix: string, check: Check) {
    this.#client = client;
    this.#prefix = prefix;
    this.#check = check;
  }

  /** Resolves how the job ended, telling `onProgress` of its progress; rejects after timeoutMs. */
  async wait(
    id: string,
    group: number,
    timeoutMs: number,
    onProgress?: (value: unknown) => void,
  ): Promise<Ending | 'gone'> {
    if (this.#closed) throw errors.closed('queue');
    const reader = this.#reader(group);
    let settle!: (ending: Ending | 'gone') => void;
    let fail!: (error: unknown) => void;
    const ended = new Promise<Ending | 'gone'>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const waiter: Waiter = { settle: (ending) => settle(ending), fail: (error) => fail(error) };
    if (onProgress) waiter.progress = onProgress;
    const waiting = reader.waiters.get(id) ?? new Set<Waiter>();
    waiting.add(waiter);
    reader.waiters.set(id, waiting);
    const timer = setTimeout(() => fail(errors.waitTimeout(id, timeoutMs)), timeoutMs);
    try {
      await reader.ready;
      const now = await this.#check(id, group);
      if (now) settle(now);
      return await ended;
    } finally {
      clearTimeout(timer);
      waiting.delete(waiter);
      if (waiting.size === 0 && reader.waiters.get(id) === waiting) reader.waiters.delete(id);
      // The last waiter to leave stops the reader, once; one that left after it must not drop
      // the group's next reader from the map.
      if (reader.idle && this.#readers.get(group) === reader) {
        this.#readers.delete(group);
        reader.stop();
      }
    }
  }

  #reader(group: number): GroupReader {
    let reader = this.#readers.get(group);
    if (!reader) {
      const client = blockingCopy(this.#client);
      client.on('error', () => {}); // the loop sees each failure and tries again
      reader = new GroupReader(client, keyOf(this.#prefix, group, 'fin'), group, this.#check);
      reader.ready.catch(() => {});
      this.#readers.set(group, reader);
    }
    return reader;
  }

  close(): void {
    this.#closed = true;
    for (const reader of this.#readers.values()) reader.stop();
    this.#readers.clear();
  }
}
