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
  readonly accounting = new Accounting();
  readonly lateness = new LatenessRecorder();
  readonly latenessSinceAdded = new LatenessRecorder();
  /** when each id's add was acknowledged (only while it waits to be handled) */
  private readonly addedAt = new Map<string, number>();
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
      if (this.consumes) this.accounting.expect(m.id, due);
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
      if (this.consumes) for (const m of batch) this.addedAt.set(m.id, now);
    }
    if (!this.consumes) this.progress(this.enqueued);
  }

  /**
   * Call at the start of the handler. `dueMs` is the system's own idea of the due time (BullMQ:
   * timestamp + delay); without it the due time registered by `adding` is used. `start` is when
   * the handler started, for systems that report starts in batches from other threads.
   */
  handled(id: string, dueMs?: number, start = nowMs()): void {
    if (this.accounting.record(id) !== 'first') return;
    // Anchored at the first add, due times are the producer's, fixed before the add: a system
    // that clamps a past due time to its add (skyq, BullMQ) would otherwise report lateness from
    // when it got the message. A delay counts from the system's own add (`dueMs`) otherwise.
    const planned = this.accounting.dueOf(id);
    const due = (this.workload.anchor === 'first-add' ? planned : (dueMs ?? planned)) ?? start;
    this.lateness.record(start - due);
    // A start before the add was acknowledged (the reply still on its way) counts from due.
    const added = this.addedAt.get(id);
    this.addedAt.delete(id);
    this.latenessSinceAdded.record(start - Math.max(due, added ?? due));
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

  result(system: string, redis: RedisFigures, notes: string[] = []): BenchResult {
    const acc = this.accounting.summary();
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
      lateness: this.lateness.summary(),
      latenessSinceAdded: this.latenessSinceAdded.summary(),
      early: this.lateness.early,
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
