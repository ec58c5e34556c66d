// The messages an actor holds, from its claim to their end: started at their due
// time (one timer for the earliest, see StartTimer), run, then finished (acked
// with the next poll), failed (retried or dead-lettered), or handed back at
// shutdown. Leases are renewed a third of the way through, and a handler over
// its time limit is failed and told to stop.

import { performance } from 'node:perf_hooks';
import type { Message } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import { readThrown } from '../queue/thrown.js';
import type { ActorSettings, Handler } from './actor-types.js';
import { type Entry, type HeldClaim, InFlight } from './in-flight.js';
import type { Logger } from './logger.js';
import type { NoteRate } from './note-rate.js';
import type { PauseWindows } from './pause-windows.js';
import { Reports } from './reports.js';
import { StartTimer } from './start-timer.js';
import type { StatBlock } from './stat-block.js';

export interface JobsParts {
  settings: ActorSettings;
  queue: Queue;
  handler: Handler;
  log: Logger;
  stats: StatBlock;
  errors: NoteRate;
  /** Redis ms now, on the actor's clock */
  now(): number;
  /** when the group or launcher was paused: lateness leaves that time out */
  pauses: PauseWindows;
  /** a handler ended (the actor decides when to ack) */
  ended(): void;
}

export class Jobs {
  readonly #parts: JobsParts;
  /** the handlers' ctx.progress and ctx.log, sent before their jobs' acks and failures */
  readonly #reports: Reports;
  readonly #inFlight: InFlight;
  readonly #startTimer: StartTimer<Message>;
  /** handlers done: acked with the next poll */
  #finished: Message[] = [];
  /** told to stop at shutdown and did, or never started: handed back with no attempt counted */
  readonly #handBack: Message[] = [];
  /** fail() calls still on their way to Redis */
  readonly #failing = new Set<Promise<void>>();
  #lastRenewal = 0;
  /** shutdown: a handler that rejects after its signal was aborted is handed back, not failed */
  #draining = false;
  /** a trace of every job at debug (`skyq logs --job ID`); the level is set once, at start */
  readonly #traced: boolean;

  constructor(parts: JobsParts) {
    this.#parts = parts;
    this.#traced = parts.log.isLevelEnabled('debug');
    const { settings, queue, log, stats, errors } = parts;
    this.#reports = new Reports({ group: settings.group, queue, log, stats, errors });
    this.#inFlight = new InFlight(this.#reports);
    this.#startTimer = new StartTimer<Message>(parts.now, (message, now) =>
      this.#start(message, now),
    );
  }

  /** held: running, or leased and waiting for their due time */
  get size(): number {
    return this.#inFlight.size;
  }

  /** When the last message leased ahead falls due; null when none waits for its time. */
  get waitingUntil(): number | null {
    return this.#startTimer.lastDue;
  }

  get finishedCount(): number {
    return this.#finished.length;
  }

  /** Starts the message now, or at its due time when leased ahead (`claim`: as mirrored). */
  schedule(message: Message, now: number, claim: HeldClaim | null = null): void {
    const { stats } = this.#parts;
    stats.add('claimed');
    this.#inFlight.add(message, claim);
    stats.set('inFlight', this.#inFlight.size);
    this.#startTimer.add(message, now);
  }

  takeFinished(): Message[] {
    this.#reports.flush(); // on the connection before the ack: Redis runs it first
    const messages = this.#finished;
    this.#finished = [];
    return messages;
  }

  /** Acks that could not be sent (the poll failed) wait for the next one. */
  putBack(finished: Message[]): void {
    this.#finished.unshift(...finished);
  }

  /** Shutdown begins: what waits for its due time will not start; it goes back. */
  stopStarting(): void {
    this.#draining = true;
    for (const message of this.#startTimer.clear()) {
      this.#inFlight.delete(message);
      this.#handBack.push(message);
    }
  }

  /** Tells every running handler to stop. */
  abortRunning(reason: Error): void {
    for (const entry of this.#inFlight.entries()) InFlight.abort(entry, reason);
  }

  /**
   * The end of shutdown: the failures on their way are recorded, and the rest is returned to
   * send: finished (to ack), handed back (no attempt), stuck (still running: an attempt).
   */
  async close(): Promise<{ finished: Message[]; handBack: Message[]; stuck: Message[] }> {
    const stuck = this.#inFlight.messages();
    for (const message of stuck) this.#inFlight.delete(message);
    await Promise.all(this.#failing);
    this.#parts.stats.set('inFlight', 0);
    return { finished: this.takeFinished(), handBack: this.#handBack.splice(0), stuck };
  }

  #start(message: Message, now: number): void {
    const entry = this.#inFlight.get(message);
    if (!entry) return;
    if (message.childCount !== undefined) this.#startParent(entry);
    else if (message.schedule === undefined) this.#run(entry, now);
    else this.#startOccurrence(entry, now);
  }

  /**
   * A flow parent: its children's outcomes are read first (one call: queue.flows.children),
   * for its handler's `job.children`. When that read fails the job fails too (retried).
   */
  #startParent(entry: Entry): void {
    const { queue } = this.#parts;
    queue.flows.children(entry.message).then(
      (children) => {
        entry.message.children = children;
        this.#run(entry, this.#parts.now());
      },
      (error: unknown) => {
        if (!this.#inFlight.delete(entry.message)) return;
        this.#fail(entry.message, error);
        this.#ended();
      },
    );
  }

  /**
   * A schedule's occurrence: first add the next one (schedules.advance: only the first
   * consumer of this occurrence does), then run it, or let it go when missed ('skip'). The log
   * says which became of occurrences missed while no launcher ran: a catch-up, or one let go.
   * When that call fails the occurrence fails too, so its next delivery adds the next one.
   */
  #startOccurrence(entry: Entry, now: number): void {
    const { queue, stats, log } = this.#parts;
    const which = { job: entry.message.id, schedule: entry.message.schedule?.id };
    queue.schedules.advance(entry.message).then(
      (advance) => {
        if (advance.catchUp) log.info({ event: 'catch-up', ...which }, 'missed: one catch-up');
        if (advance.run) return this.#run(entry, now);
        if (!this.#inFlight.delete(entry.message)) return;
        log.info({ event: 'skipped', ...which }, 'missed occurrence skipped');
        stats.add('done');
        this.#finished.push(entry.message);
        this.#ended();
      },
      (error: unknown) => {
        if (!this.#inFlight.delete(entry.message)) return;
        this.#fail(entry.message, error);
        this.#ended();
      },
    );
  }

  // The hot path: a handler that returns at once costs no promise at all.
  #run(entry: Entry, now: number): void {
    const message = entry.message;
    const lateMs = this.#parts.pauses.lateness(message.dueAt, now);
    this.#parts.stats.lateness.record(lateMs);
    const context = this.#inFlight.start(entry, lateMs);
    // The check spares the hot path building a record nobody writes at the default level.
    if (this.#traced)
      this.#parts.log.debug(
        { event: 'start', job: message.id, attempt: message.attempts, lateMs: Math.round(lateMs) },
        'start',
      );
    let result: unknown;
    try {
      result = this.#parts.handler(message, context);
    } catch (error) {
      this.#settled(entry, error, true);
      return;
    }
    // Reading `then` and calling it run the handler's code (a getter, a Proxy trap, a thenable's
    // own then): what they throw fails the job, as `await` would, and never reaches the actor.
    let then: unknown;
    try {
      then = (result as { then?: unknown } | null | undefined)?.then;
    } catch (error) {
      this.#settled(entry, error, true);
      return;
    }
    if (typeof then !== 'function') {
      this.#settled(entry, result, false);
      return;
    }
    try {
      (then as PromiseLike<unknown>['then']).call(
        result,
        (value: unknown) => this.#settled(entry, value, false),
        (error: unknown) => this.#settled(entry, error, true),
      );
    } catch (error) {
      this.#settled(entry, error, true); // a settled job keeps its outcome (#settled)
    }
  }

  /** `outcome`: what the handler returned (its result), or what it threw when `failed`. */
  #settled(entry: Entry, outcome: unknown, failed: boolean): void {
    const { stats, log } = this.#parts;
    const durationMs = performance.now() - entry.startedAt;
    stats.handler.record(durationMs);
    if (entry.message.name !== undefined) {
      stats.names.record(entry.message.name, durationMs, failed);
    }
    // Timed out or handed back already: that outcome stands.
    if (!this.#inFlight.delete(entry.message)) return;
    const error = outcome;
    if (!failed) {
      // Kept in the job's history with the ack (see queue/history).
      entry.message.result = outcome;
      entry.message.durationMs = durationMs;
      stats.add('done');
      this.#finished.push(entry.message);
      if (this.#traced)
        log.debug({ event: 'done', job: entry.message.id, ms: Math.round(durationMs) }, 'done');
    } else if (entry.controller?.signal.aborted && this.#draining) {
      this.#handBack.push(entry.message); // it stopped because we asked it to
    } else {
      this.#fail(entry.message, error);
    }
    this.#ended();
  }

  #ended(): void {
    this.#parts.stats.set('inFlight', this.#inFlight.size);
    this.#parts.ended();
  }

  #fail(message: Message, error: unknown): void {
    const { stats, log, queue, errors } = this.#parts;
    this.#reports.flush();
    stats.add('failed');
    // Read once, safely: a handler may throw a value whose reading throws (thrown.ts).
    const thrown = readThrown(error);
    const text = thrown.message;
    // A name nobody handles is not retried: no attempt would find a handler. It waits in the
    // dead letters, with that reason, for a deploy that adds one and a dead-letter retry.
    const noHandler = thrown.code === 'ERR_SKYQ_NO_HANDLER';
    const call = queue.fail(message, thrown, { retry: !noHandler }).then(
      (outcome) => {
        if (outcome === 'retry') stats.add('retried');
        if (outcome === 'dead') stats.add('dead');
        if (outcome === 'stale') stats.add('stale');
        const event = outcome === 'retry' ? 'failed' : outcome;
        const fields = { event, job: message.id, attempt: message.attempts, err: text, outcome };
        // The stack as the job's record keeps it (its first 8 KiB), when there is one.
        const stack = thrown.stack;
        log[outcome === 'dead' ? 'error' : 'warn'](
          stack ? { ...fields, stack } : fields,
          'handler failed',
        );
      },
      // The lease will expire and the message comes back: nothing is lost.
      (failError: unknown) =>
        errors.note(`could not record the failure of ${message.id}`, failError, stats),
    );
    const tracked = call.finally(() => this.#failing.delete(tracked));
    this.#failing.add(tracked);
  }

  /** Renews leases a third of the way through, and fails handlers over their time limit. */
  housekeep(): void {
    const { settings, queue, stats, log, errors } = this.#parts;
    const { timeoutMs, leaseMs } = settings;
    if (timeoutMs > 0) {
      // Made here, not thrown by the handler: its stack would name skyq's frames only.
      const reason = Object.assign(new Error(`handler timed out after ${timeoutMs} ms`), {
        stack: '',
      });
      for (const entry of this.#inFlight.overdue(timeoutMs)) {
        this.#inFlight.delete(entry.message);
        InFlight.abort(entry, reason);
        this.#fail(entry.message, reason);
        this.#ended();
      }
    }
    if (this.#inFlight.size === 0 || performance.now() - this.#lastRenewal < leaseMs / 3) return;
    this.#lastRenewal = performance.now();
    const messages = this.#inFlight.messages();
    queue.extendLease(messages, leaseMs).then(
      (renewed) => {
        if (renewed === messages.length) return;
        stats.add('stale', messages.length - renewed);
        log.warn(
          { event: 'stale', count: messages.length - renewed },
          'lease renewals refused: those leases had expired and gone to another consumer',
        );
      },
      (error: unknown) => errors.note('lease renewal failed', error, stats),
    );
  }
}
