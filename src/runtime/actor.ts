// One actor serves one group: poll (ack what finished, promote what is due,
// lease a batch) → run handlers, up to `concurrency` at once → poll again.
// When nothing is ready it waits in the Waker until the next due time or a
// producer's signal. The actor never dies of a message: a handler that throws
// or times out fails that message, nothing more. Every lease it holds carries
// the token of the claim that made it; a lease that went to another consumer
// is never acked, failed or renewed by this one.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { ReplyClock } from '../clock.js';
import type { Message, PollResult } from '../message.js';
import type { Queue } from '../queue.js';
import type { ActorApi, ActorSettings, Handler } from './actor-types.js';
import { type Entry, InFlight } from './in-flight.js';
import type { ActorStat } from './launcher-stats.js';
import type { Logger } from './logger.js';
import { NoteRate } from './note-rate.js';
import { StartTimer } from './start-timer.js';
import { type ActorState, StatBlock } from './stat-block.js';
import { every, later } from './timers.js';
import type { Waker } from './waker.js';

export type { ActorApi, ActorSettings, Handler, JobContext } from './actor-types.js';

const ERROR_PAUSE_MS = 500;
const MAX_ERROR_PAUSE_MS = 5000;
/** A paused group is looked at again this often, besides the token resume() pushes. */
const PAUSED_RECHECK_MS = 5000;
/**
 * Finished messages are acked with the next poll, or after this long when no poll comes:
 * long enough for a steady trickle to ack on its claims, short enough to keep the
 * redeliveries a crash would cause (the finished, not yet acked) few.
 */
const ACK_DELAY_MS = 200;
/** Wake this much before the next due time: the claim's round trip fits in it. */
const WAKE_EARLY_MS = 3;
/** After the grace, handlers told to stop get this long to do so. */
const ABORT_GRACE_MS = 1000;
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === 'function';

export class Actor {
  readonly #settings: ActorSettings;
  readonly #queue: Queue;
  readonly #waker: Waker;
  readonly #handler: Handler;
  readonly #log: Logger;
  readonly #stats: StatBlock;
  readonly #inFlight = new InFlight();
  readonly #startTimer = new StartTimer<Message>(
    () => this.#redisNow(),
    (message, now) => this.#start(message, now),
  );
  /** handlers done: acked with the next poll */
  #finished: Message[] = [];
  /** told to stop at shutdown and did: handed back with no attempt counted */
  readonly #handBack: Message[] = [];
  /** fail() calls still on their way to Redis */
  readonly #failing = new Set<Promise<void>>();
  /** Redis's clock, from the claims' replies: never ahead, never moved by the wall clock */
  readonly #clock = new ReplyClock();
  readonly #errors: NoteRate;
  #loop: Promise<void> = Promise.resolve();
  #housekeeping: NodeJS.Timeout | undefined;
  #ackTimer: NodeJS.Timeout | undefined;
  #lastRenewal = 0;
  #resume: () => void = () => undefined;

  constructor(
    settings: ActorSettings,
    queue: Queue,
    waker: Waker,
    handler: Handler,
    log: Logger,
    stats = new StatBlock(),
  ) {
    this.#settings = settings;
    this.#queue = queue;
    this.#waker = waker;
    this.#handler = handler;
    this.#log = log;
    this.#stats = stats;
    this.#errors = new NoteRate(log);
    stats.startedAt = Date.now();
    stats.state = 'starting';
    stats.set('inFlight', 0);
  }

  get #state(): ActorState {
    return this.#stats.state;
  }

  set #state(state: ActorState) {
    this.#stats.state = state;
  }

  start(): void {
    this.#state = 'running';
    const { leaseMs, timeoutMs } = this.#settings;
    // One timer renews leases (a third of the way through) and times out handlers.
    const tick = Math.min(leaseMs / 3, timeoutMs > 0 ? Math.max(50, timeoutMs / 10) : 1000);
    this.#housekeeping = every(() => this.#housekeep(), Math.max(50, Math.floor(tick)));
    this.#loop = this.#run();
    const { group: _group, ...settings } = this.#settings;
    this.#log.info({ event: 'started', ...settings }, 'actor started');
  }

  api(): ActorApi {
    return {
      ping: () => 'pong',
      stat: () => this.stat(),
      mem: () => {
        const heap = getHeapStatistics();
        return {
          heapUsed: heap.used_heap_size,
          heapTotal: heap.total_heap_size,
          external: heap.external_memory,
        };
      },
      drain: (graceMs) => this.drain(graceMs),
      resume: () => this.#resume(),
      poke: () => this.#waker.poke(),
    };
  }

  stat(): ActorStat {
    return { ...this.#stats.figures(), group: this.#settings.group, threadId };
  }

  /**
   * Stop claiming; hand back what has not started; let running handlers finish for up to
   * graceMs; then tell the rest to stop. Those that do are handed back with no attempt
   * counted; those still running a moment later are handed back counting one, so a handler
   * that never ends does not come back forever.
   */
  async drain(graceMs: number): Promise<{ released: number }> {
    if (this.#state !== 'running' && this.#state !== 'paused') return { released: 0 };
    this.#state = 'draining';
    this.#waker.poke();
    await this.#loop;
    for (const message of this.#startTimer.clear()) {
      this.#inFlight.delete(message);
      this.#handBack.push(message);
    }
    await this.#settle(graceMs);
    if (this.#inFlight.size > 0) {
      const reason = new Error('the actor is shutting down');
      for (const entry of this.#inFlight.entries()) InFlight.abort(entry, reason);
      await this.#settle(ABORT_GRACE_MS);
    }
    clearInterval(this.#housekeeping);
    clearTimeout(this.#ackTimer);
    const stuck = this.#inFlight.messages();
    for (const message of stuck) this.#inFlight.delete(message);
    let released = 0;
    try {
      await Promise.all(this.#failing);
      await this.#queue.ack(this.#takeFinished());
      released += await this.#queue.release(this.#handBack.splice(0));
      released += await this.#queue.release(stuck, { attempted: true });
    } catch (error) {
      // Redis is gone: the leases will expire and the messages come back anyway.
      this.#log.error({ event: 'drain-error', err: error }, 'could not hand leases back');
    }
    this.#state = 'stopped';
    this.#stats.set('inFlight', 0);
    const counters = this.#stats.counters();
    this.#log.info(
      { event: 'stopped', released, stuck: stuck.length, ...counters },
      'actor stopped',
    );
    return { released };
  }

  async #settle(ms: number): Promise<void> {
    const deadline = performance.now() + ms;
    while (this.#inFlight.size > 0 && performance.now() < deadline) {
      await this.#waker.wait(deadline - performance.now(), false);
    }
  }

  async #run(): Promise<void> {
    if (this.#settings.paused) await this.#waitForResume();
    let errorPause = ERROR_PAUSE_MS;
    while (this.#state === 'running' || this.#state === 'paused') {
      const room = this.#settings.concurrency - this.#inFlight.size;
      this.#waker.full = room <= 0;
      if (room <= 0) {
        await this.#waker.wait(-1, false);
        continue;
      }
      clearTimeout(this.#ackTimer);
      this.#ackTimer = undefined;
      const ack = this.#takeFinished();
      const max = Math.min(room, this.#settings.batch);
      const polled = await this.#poll(max, ack);
      if (!polled) {
        this.#finished.unshift(...ack);
        await this.#waker.wait(errorPause);
        errorPause = Math.min(MAX_ERROR_PAUSE_MS, errorPause * 2);
        continue;
      }
      errorPause = ERROR_PAUSE_MS;
      if (polled.paused !== (this.#state === 'paused')) {
        this.#state = polled.paused ? 'paused' : 'running';
        this.#log.info({ event: this.#state }, polled.paused ? 'group paused' : 'group resumed');
      }
      if (polled.paused) {
        await this.#waker.wait(PAUSED_RECHECK_MS);
        continue;
      }
      const now = this.#redisNow();
      for (const message of polled.messages) this.#schedule(message, now);
      if (polled.messages.length === max) continue;
      await this.#idle(polled.nextDueAt < 0 ? Number.POSITIVE_INFINITY : polled.nextDueAt);
    }
  }

  /**
   * Waits until shortly before `plan` (Redis ms), a poke, or a token. A token for something due
   * later moves the plan to it instead of ending the wait: one claim then leases everything
   * due by then, where a claim per add would cost one round trip each.
   */
  async #idle(plan: number): Promise<void> {
    for (;;) {
      // The launcher's watcher reads this: work due before it gets a poke (raw ZADDs send no token).
      this.#stats.plannedAt = plan;
      // Nothing planned (-1): wait for a token or a poke only.
      const sleep =
        plan === Number.POSITIVE_INFINITY
          ? -1
          : Math.max(0, plan - this.#redisNow() - WAKE_EARLY_MS);
      const reason = await this.#waker.wait(sleep);
      const due = this.#waker.tokenDue;
      if (reason !== 'token' || due - this.#redisNow() <= WAKE_EARLY_MS) break;
      plan = Math.min(plan, due);
    }
    this.#stats.plannedAt = 0;
  }

  async #waitForResume(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#resume = () => {
        resolve();
        this.#waker.poke(); // ends the wait below, so it holds on to nothing
      };
      // drain() while paused ends the wait too.
      this.#waker.wait(-1, false).then(() => resolve());
    });
  }

  /** One claim; null when it failed (noted). Its `now` feeds the actor's clock. */
  async #poll(max: number, ack: Message[]): Promise<PollResult | null> {
    const { group, leaseMs, lookaheadMs } = this.#settings;
    const sent = performance.now();
    let polled: PollResult;
    try {
      polled = await this.#queue.poll(group, { max, leaseMs, ack, lookaheadMs });
    } catch (error) {
      this.#errors.note('poll failed', error, this.#stats);
      return null;
    }
    const received = performance.now();
    this.#stats.redisRtt.record(received - sent);
    this.#clock.observe(polled.now, received);
    if (polled.stale.length > 0) {
      this.#stats.add('stale', polled.stale.length);
      this.#log.warn(
        { event: 'stale', jobs: polled.stale.slice(0, 20), count: polled.stale.length },
        'acks refused: those leases had expired and gone to another consumer',
      );
    }
    for (const bad of polled.malformed) {
      this.#stats.add('dead');
      const fields = { event: 'dead', job: bad.message.id, reason: bad.reason };
      this.#log.warn(fields, 'malformed message dead-lettered');
    }
    return polled;
  }

  #redisNow(): number {
    return this.#clock.now();
  }

  /** Starts the message now, or at its due time when it was leased ahead. */
  #schedule(message: Message, now: number): void {
    this.#stats.add('claimed');
    this.#inFlight.add(message);
    this.#stats.set('inFlight', this.#inFlight.size);
    this.#startTimer.add(message, now);
  }

  // The hot path: a handler that returns at once costs no promise at all.
  #start(message: Message, now: number): void {
    const entry = this.#inFlight.get(message);
    if (!entry) return;
    const lateMs = now - message.dueAt;
    this.#stats.lateness.record(lateMs);
    const context = this.#inFlight.start(entry, lateMs);
    let result: unknown;
    try {
      result = this.#handler(message, context);
    } catch (error) {
      this.#settled(entry, error, true);
      return;
    }
    if (!isThenable(result)) {
      this.#settled(entry, undefined, false);
      return;
    }
    result.then(
      () => this.#settled(entry, undefined, false),
      (error: unknown) => this.#settled(entry, error, true),
    );
  }

  #settled(entry: Entry, error: unknown, failed: boolean): void {
    this.#stats.handler.record(performance.now() - entry.startedAt);
    // Timed out or handed back already: that outcome stands.
    if (!this.#inFlight.delete(entry.message)) return;
    if (!failed) {
      this.#stats.add('done');
      this.#finished.push(entry.message);
      this.#log.debug({ event: 'done', job: entry.message.id }, 'done');
    } else if (entry.controller?.signal.aborted && this.#state === 'draining') {
      this.#handBack.push(entry.message); // it stopped because we asked it to
    } else {
      this.#fail(entry.message, error);
    }
    this.#finish();
  }

  #finish(): void {
    const size = this.#inFlight.size;
    this.#stats.set('inFlight', size);
    // A full actor polls at once (it has room again); otherwise acks ride on the next poll,
    // or go after a short pause, so a trickle does not cost a call each.
    const wasFull = size === this.#settings.concurrency - 1;
    if (wasFull || this.#state === 'draining' || this.#finished.length >= this.#settings.batch) {
      this.#waker.poke();
    } else {
      this.#ackTimer ??= later(() => {
        this.#ackTimer = undefined;
        this.#waker.poke();
      }, ACK_DELAY_MS);
    }
  }

  #fail(message: Message, error: unknown): void {
    this.#stats.add('failed');
    const text = error instanceof Error ? error.message : String(error);
    const call = this.#queue.fail(message, error).then(
      (outcome) => {
        if (outcome === 'retry') this.#stats.add('retried');
        if (outcome === 'dead') this.#stats.add('dead');
        if (outcome === 'stale') this.#stats.add('stale');
        const event = outcome === 'retry' ? 'failed' : outcome;
        const fields = { event, job: message.id, attempt: message.attempts, err: text, outcome };
        this.#log[outcome === 'dead' ? 'error' : 'warn'](fields, 'handler failed');
      },
      // The lease will expire and the message comes back: nothing is lost.
      (failError: unknown) =>
        this.#errors.note(`could not record the failure of ${message.id}`, failError, this.#stats),
    );
    const tracked = call.finally(() => this.#failing.delete(tracked));
    this.#failing.add(tracked);
  }

  /** Renews leases a third of the way through, and fails handlers over their time limit. */
  #housekeep(): void {
    const { timeoutMs, leaseMs } = this.#settings;
    if (timeoutMs > 0) {
      const reason = new Error(`handler timed out after ${timeoutMs} ms`);
      for (const entry of this.#inFlight.overdue(timeoutMs)) {
        this.#inFlight.delete(entry.message);
        InFlight.abort(entry, reason);
        this.#fail(entry.message, reason);
        this.#finish();
      }
    }
    if (this.#inFlight.size === 0 || performance.now() - this.#lastRenewal < leaseMs / 3) return;
    this.#lastRenewal = performance.now();
    const messages = this.#inFlight.messages();
    this.#queue.extendLease(messages, leaseMs).then(
      (renewed) => {
        if (renewed === messages.length) return;
        this.#stats.add('stale', messages.length - renewed);
        this.#log.warn(
          { event: 'stale', count: messages.length - renewed },
          'lease renewals refused: those leases had expired and gone to another consumer',
        );
      },
      (error: unknown) => this.#errors.note('lease renewal failed', error, this.#stats),
    );
  }

  #takeFinished(): Message[] {
    const messages = this.#finished;
    this.#finished = [];
    return messages;
  }
}
