// The contract of an actor: what its handler gets, how it is set up, and the
// calls it answers (skynet's debug protocol plus drain and resume).
import type { Message } from '../queue/message.js';
import type { RateLimitSpec } from '../queue/ratelimit/spec.js';
import type { Body } from '../queue/record.js';
import type { ActorStat } from './launcher-stats.js';

/** What a handler gets beside its job: a signal to stop on, and how late it started. */
export interface JobContext {
  /** aborted when the handler runs past the actor's time limit, or shutdown asks it to stop */
  readonly signal: AbortSignal;
  /** how late this start was: start − due time, in ms on Redis's clock (as stats count it) */
  readonly lateMs: number;
  /**
   * Records the job's progress: a number from 0 to 100, or a JSON value up to 4 KiB (get()
   * shows the last one; waitFor's onProgress and events() are told). Returns at once: calls
   * go to Redis together, at most every 50 ms. Throws on a value it cannot take.
   */
  progress(value: unknown): void;
  /** Appends a line (up to 1 KiB) to the job's log, which keeps its last 100; as progress(). */
  log(line: string): void;
}

/**
 * What handles a job: its return value is the job's result, a throw or rejection fails it.
 * `B` is what the handler expects its jobs' bodies to be (`Handler<{ orderId: string }>`); skyq
 * does not check it: bodies are what producers added (and a raw member other programs add is
 * its text).
 */
export type Handler<B = Body> = (job: Message<B>, context: JobContext) => unknown;

export interface ActorSettings {
  group: number;
  /** handlers running at once */
  concurrency: number;
  /** most messages leased per poll */
  batch: number;
  leaseMs: number;
  /** fail a handler that runs longer (0 = no limit) */
  timeoutMs: number;
  /** lease messages due this soon and start them on a local timer (see claim.lua) */
  lookaheadMs: number;
  /** shared rate limits: tokens taken around each claim (see rate-gate.ts); null = none */
  rateLimit?: RateLimitSpec | null;
  /** start without claiming until resume() */
  paused?: boolean;
  /**
   * How often the actor writes its heartbeat (hang-watch.ts), at most CHORES_MS: its other
   * chores (the flow outbox, schedule repair, a PING) ride on every round that far apart.
   */
  beatMs: number;
}

/** What every actor answers without handler code: skynet's debug protocol. */
export interface ActorApi {
  /** answers at once while the actor's thread is alive */
  ping(): 'pong';
  /** the actor's figures */
  stat(): ActorStat;
  /** the thread's heap, in bytes */
  mem(): {
    /** heap in use */
    heapUsed: number;
    /** heap reserved */
    heapTotal: number;
    /** memory outside the heap (Buffers) */
    external: number;
  };
  /** stops claiming, lets running handlers finish up to graceMs, hands the rest back */
  drain(graceMs: number): Promise<{
    /** leases handed back unstarted or unfinished */
    released: number;
  }>;
  /** start claiming (an actor started paused) */
  resume(): void;
  /** look at the group now (the launcher's watcher saw work the actor was not told of) */
  poke(): void;
}
