// ctx.progress and ctx.log on the piscina pool. A pool thread holds no Redis connection, so its
// calls travel back to the actor that sent the job, on a BroadcastChannel named by that actor
// (one per actor, unref'd: it keeps no thread alive), and the actor reports them as its own
// handlers' (reports.ts). A pool thread posts what a job reported in one turn of its event loop
// as one message, and tells with each job's outcome how many calls it posted: the outcome
// comes another way (piscina, the launcher, the actor's pool port), so the actor waits for the
// last of them before it acks the job, while its lease still holds. A job done while others of
// its task still run sends its outcome on this channel too, after its calls (handler-task.ts).
import { randomBytes } from 'node:crypto';
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { checkLogLine, progressText } from '../queue/reports.js';
import type { JobContext } from './actor-types.js';

/**
 * One call on a pool thread: the job's ref, 0 progress (JSON text) or 1 log line, the text; or
 * 2 and the job's outcome, sent ahead of its task's answer (handler-task.ts says when).
 */
export type PoolReport =
  | [ref: number, kind: 0 | 1, text: string]
  | [ref: number, kind: 2, outcome: unknown];

/** How long an actor waits for a pool job's reports once its outcome came. */
const LAST_REPORTS_MS = 1000;

/** The pool thread's side: contexts whose calls are posted to the actor's channel. */
export class PoolReporter {
  readonly #name: string;
  /** opened on the first call: a pool that never reports opens none */
  #channel: BroadcastChannel | undefined;
  #queued: PoolReport[] = [];
  readonly #counts = new Map<number, number>();

  constructor(name: string) {
    this.#name = name;
  }

  /** A job's context on a pool thread (its signal never aborts: a pool task cannot be stopped). */
  contextOf(ref: number, lateMs: number, signal: AbortSignal): JobContext {
    return {
      signal,
      lateMs,
      progress: (value: unknown) => this.#post(ref, 0, progressText(value)),
      log: (line: string) => this.#post(ref, 1, checkLogLine(line)),
    };
  }

  /** Jobs it keeps anything for (a test reads it: a long-running pool must not grow it). */
  get size(): number {
    return this.#counts.size;
  }

  /** How many calls the job posted; forgets it. */
  takeCount(ref: number): number {
    const count = this.#counts.get(ref) ?? 0;
    this.#counts.delete(ref);
    return count;
  }

  /** Queues a job's outcome after its calls (it is not one of them: not counted); flush() posts. */
  settled(ref: number, outcome: unknown): void {
    this.#queued.push([ref, 2, outcome]);
  }

  /** Posts what is queued now (before the outcomes go back). */
  flush(): void {
    if (this.#queued.length === 0) return;
    if (!this.#channel) {
      this.#channel = new BroadcastChannel(this.#name);
      this.#channel.unref();
    }
    this.#channel.postMessage(this.#queued);
    this.#queued = [];
  }

  #post(ref: number, kind: 0 | 1, text: string): void {
    if (this.#queued.length === 0) queueMicrotask(() => this.flush());
    this.#queued.push([ref, kind, text]);
    this.#counts.set(ref, (this.#counts.get(ref) ?? 0) + 1);
  }
}

/** The actor's side: each pool job's context by ref, fed by the channel. */
export class PoolReports {
  /** the channel's name, sent with each pool task */
  readonly name = `skyq-reports-${process.pid}-${threadId}-${randomBytes(4).toString('hex')}`;
  readonly #channel: BroadcastChannel;
  readonly #jobs = new Map<
    number,
    {
      context: JobContext;
      received: number;
      expected: number;
      done?: () => void;
      early: (outcome: unknown) => void;
    }
  >();
  #refs = 0;

  constructor() {
    this.#channel = new BroadcastChannel(this.name);
    this.#channel.unref();
    this.#channel.onmessage = (event) => this.#receive((event as { data: PoolReport[] }).data);
  }

  /**
   * A job sent to the pool: its ref, which its calls carry. `early` takes its outcome when it
   * comes ahead of its task's answer (which then settles nothing more).
   */
  track(context: JobContext, early: (outcome: unknown) => void): number {
    const ref = ++this.#refs;
    this.#jobs.set(ref, { context, received: 0, expected: 0, early });
    return ref;
  }

  /** The job's outcome came, telling `count` calls: runs `settle` once they all arrived. */
  finish(ref: number, count: number, settle: () => void): void {
    const job = this.#jobs.get(ref);
    if (!job || job.received >= count) {
      this.#jobs.delete(ref);
      settle();
      return;
    }
    const timer = setTimeout(() => job.done?.(), LAST_REPORTS_MS);
    job.expected = count;
    job.done = () => {
      clearTimeout(timer);
      this.#jobs.delete(ref);
      settle();
    };
  }

  #receive(reports: PoolReport[]): void {
    for (const [ref, kind, text] of reports) {
      const job = this.#jobs.get(ref);
      if (!job) continue;
      if (kind === 2) {
        // Its calls came before it on this channel: settled now, its task's answer changes nothing.
        this.#jobs.delete(ref);
        if (job.done) job.done();
        else job.early(text);
        continue;
      }
      try {
        if (kind === 0) job.context.progress(JSON.parse(text));
        else job.context.log(text);
      } catch {
        // Checked on the pool thread already: nothing here throws but a closed actor.
      }
      job.received += 1;
      if (job.done && job.received >= job.expected) job.done();
    }
  }
}

/** A pool thread's reporter for each actor channel it was given (made on first use). */
const reporters = new Map<string, PoolReporter>();
export function poolReporter(name: string): PoolReporter {
  let reporter = reporters.get(name);
  if (!reporter) {
    reporter = new PoolReporter(name);
    reporters.set(name, reporter);
  }
  return reporter;
}
