/**
 * One run's bookkeeping, shared by every runner so "when did it start", "when is it done" and
 * "what counts as late" mean the same for the naive loop, BullMQ and skyq.
 */
import { Accounting, LatenessRecorder, type RedisFigures } from './measures.js';
import {
  type BenchResult,
  messageCount,
  nowMs,
  type Planned,
  type Progress,
  type WorkloadOptions,
} from './workloads.js';

const PROGRESS_EVERY_MS = 100;

export class RunTracker {
  readonly accounting: Accounting;
  /**
   * Per id: when its add was acknowledged, then when its first handling started. Histograms are
   * filled from these once the run is over, so measuring costs the producer's thread (whose
   * speed is one of the figures) a few array writes a message, not a histogram record.
   */
  private readonly addedAt: Float64Array;
  private readonly startedAt: Float64Array;
  /** dueMs reported by the system (a delay counting from its own add), NaN when none */
  private readonly systemDue: Float64Array;
  readonly messages: number;
  /** memory adds far-future messages and consumes nothing */
  readonly consumes: boolean;
  private firstAdd = Number.NaN;
  private cpuAtFirstAdd: NodeJS.CpuUsage | undefined;
  private cpuSeconds = Number.NaN;
  private lastAdd = Number.NaN;
  private firstDue = Number.POSITIVE_INFINITY;
  /** burst: consumers are let go only once everything is added */
  private released = Number.NEGATIVE_INFINITY;
  private lastDue = Number.NEGATIVE_INFINITY;
  private lastHandled = Number.NaN;
  private enqueued = 0;
  private lastProgress = 0;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly workload: WorkloadOptions,
    private readonly onProgress?: Progress,
  ) {
    this.messages = messageCount(workload);
    this.consumes = workload.name !== 'memory';
    this.accounting = new Accounting(this.messages);
    this.addedAt = new Float64Array(this.messages).fill(Number.NaN);
    this.startedAt = new Float64Array(this.messages).fill(Number.NaN);
    this.systemDue = new Float64Array(this.messages).fill(Number.NaN);
  }

  /** Call right before a chunk goes out: registers its ids; returns each message's due time. */
  adding(batch: Planned[]): number[] {
    const now = Date.now();
    if (Number.isNaN(this.firstAdd)) {
      this.firstAdd = now;
      this.cpuAtFirstAdd = process.cpuUsage();
    }
    const anchor = this.workload.anchor === 'first-add' ? this.firstAdd : now;
    return batch.map((m) => {
      const due = anchor + m.delayMs;
      if (this.consumes) this.accounting.expect(this.accounting.indexOf(m.id), due);
      if (due < this.firstDue) this.firstDue = due;
      if (due > this.lastDue) this.lastDue = due;
      return due;
    });
  }

  /** Call once the system acknowledged the chunk (its ids, or how many it held). */
  added(batch: Planned[] | number): void {
    const now = Date.now();
    this.lastAdd = now;
    if (typeof batch === 'number') {
      this.enqueued += batch;
    } else {
      this.enqueued += batch.length;
      if (this.consumes) {
        for (const m of batch) {
          const index = this.accounting.indexOf(m.id);
          // Started already (before the ack came back): that start counts from due.
          if (Number.isNaN(this.addedAt[index] as number)) this.addedAt[index] = now;
        }
      }
    }
    if (!this.consumes) this.progress(this.enqueued);
  }

  /**
   * Call at the start of the handler. `dueMs` is the system's own idea of the due time (BullMQ:
   * timestamp + delay); without it the due time registered by `adding` is used. `start` is when
   * the handler started, for systems that report starts in batches from other threads.
   */
  handled(id: string, dueMs?: number, start = nowMs()): void {
    const index = this.accounting.indexOf(id);
    if (this.accounting.record(index) !== 'first') return;
    this.startedAt[index] = start;
    // Not acknowledged yet: max(due, added) is due for this one (see latenessRecorders).
    if (Number.isNaN(this.addedAt[index] as number)) this.addedAt[index] = Number.NEGATIVE_INFINITY;
    if (dueMs !== undefined) this.systemDue[index] = dueMs;
    this.lastHandled = start;
    this.progress(this.accounting.handled);
    if (this.accounting.handled >= this.messages) this.wake?.();
  }

  /** Burst: the consumers start now; drain rate counts from here. */
  consumersReleased(): void {
    this.released = Date.now();
  }

  /** A consumer or worker broke: ends `drained` with this error instead of waiting it out. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.wake?.();
  }

  /**
   * After the producer finished: resolves true once every message was handled, false when the
   * last due time plus `graceMs` passed first (the rest then counts as lost).
   */
  async drained(graceMs: number): Promise<boolean> {
    const complete = () => !this.consumes || this.accounting.handled >= this.messages;
    if (!complete() && !this.failure) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, this.lastDue + graceMs - Date.now()));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    if (this.failure) throw this.failure.error;
    const cpu = process.cpuUsage(this.cpuAtFirstAdd);
    this.cpuSeconds = (cpu.user + cpu.system) / 1e6;
    this.progress(this.consumes ? this.accounting.handled : this.enqueued, true);
    return complete();
  }

  private progress(done: number, force = false): void {
    const now = Date.now();
    if (!this.onProgress || (!force && now - this.lastProgress < PROGRESS_EVERY_MS)) return;
    this.lastProgress = now;
    this.onProgress(done, this.messages);
  }

  /**
   * Lateness of every first handling: from due, and from max(due, added). Anchored at the first
   * add, due times are the producer's, fixed before the add: a system that clamps a past due time
   * to its add (skyq, BullMQ) would otherwise report lateness from when it got the message. A
   * delay counts from the system's own add (its reported dueMs) otherwise. A start before the
   * add was acknowledged (the reply still on its way) counts from due.
   */
  private latenessRecorders(): { fromDue: LatenessRecorder; sinceAdded: LatenessRecorder } {
    const fromDue = new LatenessRecorder();
    const sinceAdded = new LatenessRecorder();
    const anchored = this.workload.anchor === 'first-add';
    for (let i = 0; i < this.messages; i++) {
      const start = this.startedAt[i] as number;
      if (Number.isNaN(start)) continue;
      const planned = this.accounting.dueOf(i);
      const reported = this.systemDue[i] as number;
      const due = anchored || Number.isNaN(reported) ? planned : reported;
      fromDue.record(start - due);
      const added = this.addedAt[i] as number;
      sinceAdded.record(start - Math.max(due, Number.isNaN(added) ? due : added));
    }
    return { fromDue, sinceAdded };
  }

  result(system: string, redis: RedisFigures, notes: string[] = []): BenchResult {
    const acc = this.accounting.summary();
    const { fromDue, sinceAdded } = this.latenessRecorders();
    const { messages, consumes } = this;
    const enqueueSeconds = (this.lastAdd - this.firstAdd) / 1000;
    const all = [...notes];
    if (acc.unexpected > 0) all.push(`${acc.unexpected} handled ids were never added`);
    const drainSeconds = consumes
      ? (this.lastHandled - Math.max(this.firstDue, this.released)) / 1000
      : Number.NaN;
    return {
      system,
      workload: this.workload.name,
      messages,
      enqueueSeconds,
      enqueueRate: messages / enqueueSeconds,
      drainSeconds,
      drainRate: consumes ? acc.handled / drainSeconds : Number.NaN,
      totalSeconds: consumes ? (this.lastHandled - this.firstAdd) / 1000 : Number.NaN,
      lateness: fromDue.summary(),
      latenessSinceAdded: sinceAdded.summary(),
      early: fromDue.early,
      commandsPerMessage: redis.calls / messages,
      scriptCallsPerMessage: redis.scriptCalls / messages,
      redisCpuSeconds: redis.cpuSeconds,
      nodeCpuSeconds: this.cpuSeconds,
      ...(consumes ? {} : { bytesPerMessage: redis.usedMemory / messages }),
      handled: acc.handled,
      duplicates: acc.duplicates,
      lost: acc.lost,
      ...(all.length > 0 ? { notes: all } : {}),
    };
  }
}
