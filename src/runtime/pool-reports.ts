// ctx.progress and ctx.log on the piscina pool. A pool thread holds no Redis connection, so its
// calls travel back to the actor that sent the job, on a BroadcastChannel named by that actor
// (one per actor, unref'd: it keeps no thread alive), and the actor reports them as its own
// handlers' (reports.ts). A pool thread posts what a job reported in one turn of its event loop
// as one message, and tells with each job's outcome how many calls it posted: the outcome
// comes another way (piscina, the launcher, the actor's pool port), so the actor waits for the
// last of them before it acks the job, while its lease still holds. A job done while others of
// its task still run sends its outcome on this channel too, after its calls (handler-task.ts).
// A call made once the job's handler returned is dropped on the pool thread, as in the actor
// (late-reports.ts): the first one posts a notice naming the job, for the actor's log, and
// none adds to what the thread keeps (it forgets the job when its task answers).
import { randomBytes } from 'node:crypto';
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { checkLogLine, progressText } from '../queue/reports.js';
import type { JobContext } from './actor-types.js';
import { noteLateReport } from './late-reports.js';
import type { Logger } from './logger.js';

/**
 * One call on a pool thread: the job's ref, 0 progress (JSON text) or 1 log line, the text; or
 * 2 and the job's outcome, sent ahead of its task's answer (handler-task.ts says when); or 3 and
 * the job's id: it called after its handler returned (once per job; those calls are dropped).
 */
export type PoolReport =
  | [ref: number, kind: 0 | 1, text: string]
  | [ref: number, kind: 2, outcome: unknown]
  | [ref: number, kind: 3, job: string];

/** What a pool thread keeps of a job until its task answers; its context holds it too. */
interface PoolJobState {
  readonly id: string;
  /** calls posted */
  count: number;
  /** its handler returned or threw: later calls are late */
  ended: boolean;
  /** the notice of its late calls was posted */
  told: boolean;
}

/** How long an actor waits for a pool job's reports once its outcome came. */
const LAST_REPORTS_MS = 1000;

/** The pool thread's side: contexts whose calls are posted to the actor's channel. */
export class PoolReporter {
  readonly #name: string;
  /** opened on the first call: a pool that never reports opens none */
  #channel: BroadcastChannel | undefined;
  #queued: PoolReport[] = [];
  /** the jobs of the tasks running, by ref: forgotten as each task answers (takeCount) */
  readonly #jobs = new Map<number, PoolJobState>();

  constructor(name: string) {
    this.#name = name;
  }

  /** A job's context on a pool thread (its signal never aborts: a pool task cannot be stopped). */
  contextOf(ref: number, id: string, lateMs: number, signal: AbortSignal): JobContext {
    // The context holds the state, not the map: a late call finds it after the job is forgotten.
    const state: PoolJobState = { id, count: 0, ended: false, told: false };
    this.#jobs.set(ref, state);
    return {
      signal,
      lateMs,
      progress: (value: unknown) => this.#post(ref, state, 0, progressText(value)),
      log: (line: string) => this.#post(ref, state, 1, checkLogLine(line)),
    };
  }

  /** Its handler returned or threw: its later calls are dropped. */
  ended(ref: number): void {
    const state = this.#jobs.get(ref);
    if (state) state.ended = true;
  }

  /** Jobs it keeps anything for (a test reads it: a long-running pool must not grow it). */
  get size(): number {
    return this.#jobs.size;
  }

  /** How many calls the job posted; forgets it. */
  takeCount(ref: number): number {
    const count = this.#jobs.get(ref)?.count ?? 0;
    this.#jobs.delete(ref);
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

  #post(ref: number, state: PoolJobState, kind: 0 | 1, text: string): void {
    if (state.told) return;
    if (this.#queued.length === 0) queueMicrotask(() => this.flush());
    if (state.ended) {
      state.told = true; // not counted: the actor waits for its calls, not for a notice
      this.#queued.push([ref, 3, state.id]);
      return;
    }
    this.#queued.push([ref, kind, text]);
    state.count += 1;
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
  readonly #log: Logger;

  /** `log`: the actor's, for the line about a job's late calls. */
  constructor(log: Logger) {
    this.#log = log;
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
      if (kind === 3) {
        noteLateReport(this.#log, text);
        continue;
      }
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
