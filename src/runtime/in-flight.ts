// The messages an actor holds: leased and waiting for their due time, or
// running. A handler's abort signal is made only when the handler asks for it
// (most never do), and aborting goes message by message: no AbortSignal.any,
// which on Node 20 kept every combined signal alive (the heap grew by ~85 MB
// over 400,000 messages with a time limit set). Each entry knows the claim it came in, as the
// lease mirror holds it (lease-mirror.ts): the claim leaves the mirror with its last job.
import { performance } from 'node:perf_hooks';
import type { Message } from '../queue/message.js';
import type { JobContext } from './actor-types.js';
import type { HeldClaim } from './lease-mirror.js';
import type { Reports } from './reports.js';

export type { HeldClaim };

export interface Entry {
  readonly message: Message;
  /** performance.now() when its handler started; 0 while it waits for its due time */
  startedAt: number;
  controller: AbortController | null;
  /** the claim it came in, as the lease mirror holds it (null: not mirrored), and its place */
  readonly claim: HeldClaim | null;
  readonly place: number;
  /** the actor let it go (done, failed, timed out, handed back): its handler's calls are late */
  ended: boolean;
  /** its late calls were noted in the log (once per job) */
  toldLate?: boolean;
}

/** What a handler gets besides the job; the signal is made on first use. */
class Context implements JobContext {
  readonly #entry: Entry;
  readonly #reports: Reports;
  readonly lateMs: number;
  constructor(entry: Entry, lateMs: number, reports: Reports) {
    this.#entry = entry;
    this.lateMs = lateMs;
    this.#reports = reports;
  }
  get signal(): AbortSignal {
    this.#entry.controller ??= new AbortController();
    return this.#entry.controller.signal;
  }
  progress(value: unknown): void {
    this.#reports.progress(this.#entry, value);
  }
  log(line: string): void {
    this.#reports.log(this.#entry, line);
  }
}

export class InFlight {
  readonly #entries = new Map<Message, Entry>();
  readonly #reports: Reports;

  /** `reports` takes the handlers' ctx.progress and ctx.log calls. */
  constructor(reports: Reports) {
    this.#reports = reports;
  }

  get size(): number {
    return this.#entries.size;
  }

  add(message: Message, claim: HeldClaim | null = null): Entry {
    const place = claim === null ? 0 : claim.place();
    const entry: Entry = { message, startedAt: 0, controller: null, claim, place, ended: false };
    this.#entries.set(message, entry);
    return entry;
  }

  /** Marks the handler as started; returns the context to hand it. */
  start(entry: Entry, lateMs: number): JobContext {
    entry.startedAt = performance.now();
    return new Context(entry, lateMs, this.#reports);
  }

  get(message: Message): Entry | undefined {
    return this.#entries.get(message);
  }

  /**
   * Forgets the message; false when it was no longer held (handed back or timed out). Its claim
   * leaves the lease mirror with its last job.
   */
  delete(message: Message): boolean {
    const entry = this.#entries.get(message);
    if (entry === undefined) return false;
    entry.ended = true; // its context holds the entry: a later ctx.progress or ctx.log is late
    this.#entries.delete(message);
    entry.claim?.end(entry.place);
    return true;
  }

  messages(): Message[] {
    return [...this.#entries.keys()];
  }

  entries(): Entry[] {
    return [...this.#entries.values()];
  }

  /** Running handlers started more than `timeoutMs` ago. */
  overdue(timeoutMs: number): Entry[] {
    const before = performance.now() - timeoutMs;
    const out: Entry[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.startedAt > 0 && entry.startedAt <= before) out.push(entry);
    }
    return out;
  }

  /** Tells running handlers to give up (a time limit, or shutdown). */
  static abort(entry: Entry, reason: Error): void {
    entry.controller ??= new AbortController();
    entry.controller.abort(reason);
  }
}
