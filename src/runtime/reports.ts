// A handler's ctx.progress and ctx.log in an actor. A call is checked where it is made (bad
// input throws there, in the handler) and kept with its job; every job's reports go to Redis
// together, in one report.lua call, at most one per FLUSH_EVERY_MS: a handler that reports
// at every step costs a call each 50 ms, not one per step. Nothing waits for that call: a
// failure is noted in the actor's log, a refusal (the lease was lost) too, once per job,
// and that job's later calls are dropped here. A call made once the actor ended the job (its
// handler returned, or timed out) is dropped at once, with no call (late-reports.ts). An actor
// that never reports has no timer and sends nothing.
//
// Before the actor acks, fails or hands back a job, flush() sends what is pending on the same
// connection: Redis runs the report first, while the lease still holds.
import { performance } from 'node:perf_hooks';
import type { Message } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import {
  checkLogLine,
  LOG_LINES_KEPT,
  type PendingReport,
  progressText,
} from '../queue/reports.js';
import { noteLateReport } from './late-reports.js';
import type { Logger } from './logger.js';
import type { NoteRate } from './note-rate.js';
import type { StatBlock } from './stat-block.js';
import { later } from './timers.js';

/** The shortest time between two report calls of one actor. */
export const FLUSH_EVERY_MS = 50;

/** A job as its handler's context holds it: `ended` once the actor let it go (in-flight.ts). */
export interface ReportingJob {
  readonly message: Message;
  readonly ended: boolean;
  toldLate?: boolean;
}

export interface ReportsParts {
  group: number;
  queue: Queue;
  log: Logger;
  stats: StatBlock;
  errors: NoteRate;
}

export class Reports {
  readonly #parts: ReportsParts;
  #pending = new Map<Message, PendingReport>();
  /** jobs whose reports Redis refused (their lease was lost): later ones are dropped */
  readonly #refused = new WeakSet<Message>();
  #timer: NodeJS.Timeout | undefined;
  #lastFlush = Number.NEGATIVE_INFINITY;

  constructor(parts: ReportsParts) {
    this.#parts = parts;
  }

  /** ctx.progress: a number from 0 to 100 or a JSON value up to 4 KiB (throws otherwise). */
  progress(job: ReportingJob, value: unknown): void {
    const text = progressText(value);
    const report = this.#reportOf(job);
    if (report) report.progress = text;
  }

  /** ctx.log: a line up to 1 KiB (throws otherwise); the job keeps its last 100. */
  log(job: ReportingJob, line: unknown): void {
    const text = checkLogLine(line);
    const report = this.#reportOf(job);
    if (!report) return;
    report.logged += 1;
    report.lines.push(text);
    // Only the last ones are sent: trim now and then, not on every line.
    if (report.lines.length >= 2 * LOG_LINES_KEPT) report.lines.splice(0, LOG_LINES_KEPT);
  }

  /** Sends what is pending now (before an ack, fail or hand-back of any job). */
  flush(): void {
    if (this.#pending.size === 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = new Map();
    this.#lastFlush = performance.now();
    const { queue, group, log, stats, errors } = this.#parts;
    queue.sendReports(group, batch).then(
      ({ refused }) => {
        if (refused.length === 0) return;
        const gone = new Set(refused);
        const jobs: string[] = [];
        for (const message of batch.keys()) {
          if (!gone.has(message.id) || this.#refused.has(message)) continue;
          this.#refused.add(message);
          jobs.push(message.id);
        }
        if (jobs.length === 0) return;
        log.warn(
          { event: 'report-refused', jobs: jobs.slice(0, 20), count: jobs.length },
          'progress and log lines refused: the lease is no longer ours (the job ended or timed out, or its lease expired)',
        );
      },
      (error: unknown) => errors.note('could not record progress or log lines', error, stats),
    );
  }

  #reportOf(job: ReportingJob): PendingReport | undefined {
    if (job.ended) {
      if (!job.toldLate) noteLateReport(this.#parts.log, job.message.id);
      job.toldLate = true;
      return undefined;
    }
    const message = job.message;
    if (this.#refused.has(message)) return undefined;
    let report = this.#pending.get(message);
    if (!report) {
      report = { progress: null, logged: 0, lines: [] };
      this.#pending.set(message, report);
      this.#timer ??= later(
        () => this.flush(),
        this.#lastFlush + FLUSH_EVERY_MS - performance.now(),
      );
    }
    return report;
  }
}
