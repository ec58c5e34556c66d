// One actor serves one group: poll (ack what finished, promote what is due,
// lease a batch) → run handlers, up to `concurrency` at once → poll again.
// When nothing is ready it waits in the Waker until the next due time or a
// producer's signal. The actor never dies of a message: a handler that throws
// or times out fails that message, nothing more.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';
import type { Message } from '../message.js';
import type { Queue } from '../queue.js';
import type { ActorApi, ActorSettings, Handler } from './actor-types.js';
import { invokeHandler } from './handler.js';
import type { Logger } from './logger.js';
import { type ActorStat, type Counters, emptyCounters, LatenessHistogram } from './metrics.js';
import { StartTimer } from './start-timer.js';
import type { Waker } from './waker.js';

export type { ActorApi, ActorSettings, Handler, JobContext } from './actor-types.js';

const ERROR_PAUSE_MS = 500;
/** Finished messages are acked with the next poll, or after this long when idle. */
const ACK_DELAY_MS = 50;
/** Wake this much before the next due time: the claim's round trip fits in it. */
const WAKE_EARLY_MS = 3;
const localNow = () => performance.timeOrigin + performance.now();
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === 'function';

export class Actor {
  readonly #settings: ActorSettings;
  readonly #queue: Queue;
  readonly #waker: Waker;
  readonly #handler: Handler;
  readonly #log: Logger;
  readonly #counters: Counters = emptyCounters();
  readonly #lateness = new LatenessHistogram();
  /** running or waiting for their due time; a controller when the handler has a time limit */
  readonly #inFlight = new Map<string, AbortController | null>();
  /** aborted when shutdown gives up on running handlers */
  readonly #shutdown = new AbortController();
  readonly #startTimer = new StartTimer<Message>(
    () => this.#redisNow(),
    (message, now) => this.#start(message, now),
  );
  #finished: string[] = [];
  #state: ActorStat['state'] = 'starting';
  #lastError: string | null = null;
  #loop: Promise<void> = Promise.resolve();
  #leaseTimer: NodeJS.Timeout | undefined;
  #ackTimer: NodeJS.Timeout | undefined;
  readonly #startedAt = Date.now();
  #resume: () => void = () => undefined;

  constructor(settings: ActorSettings, queue: Queue, waker: Waker, handler: Handler, log: Logger) {
    this.#settings = settings;
    this.#queue = queue;
    this.#waker = waker;
    this.#handler = handler;
    this.#log = log;
  }

  start(): void {
    this.#state = 'running';
    const renewEvery = Math.max(50, Math.floor(this.#settings.leaseMs / 3));
    this.#leaseTimer = setInterval(() => this.#renewLeases(), renewEvery);
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
    };
  }

  stat(): ActorStat {
    return {
      ...this.#counters,
      inFlight: this.#inFlight.size,
      group: this.#settings.group,
      threadId,
      state: this.#state,
      startedAt: this.#startedAt,
      lastError: this.#lastError,
      lateness: this.#lateness.summary(),
      histogram: this.#lateness.encode(),
    };
  }

  /** Stop claiming, let handlers finish for up to graceMs, hand the rest back. */
  async drain(graceMs: number): Promise<{ released: number }> {
    if (this.#state !== 'running') return { released: 0 };
    this.#state = 'draining';
    this.#waker.poke();
    await this.#loop;
    const deadline = Date.now() + graceMs;
    while (this.#inFlight.size > 0 && Date.now() < deadline) {
      await this.#waker.wait(deadline - Date.now(), false);
    }
    clearInterval(this.#leaseTimer);
    clearTimeout(this.#ackTimer);
    // What is still running or waiting goes back; running handlers are told so.
    this.#startTimer.clear();
    this.#shutdown.abort();
    const unfinished = [...this.#inFlight.keys()];
    let released = 0;
    try {
      await this.#queue.ack(this.#settings.group, this.#takeFinished());
      released = await this.#queue.release(this.#settings.group, unfinished);
    } catch (error) {
      // Redis is gone: the leases will expire and the messages come back anyway.
      this.#log.error({ event: 'drain-error', err: error }, 'could not hand leases back');
    }
    this.#state = 'stopped';
    this.#log.info({ event: 'stopped', released, ...this.#counters }, 'actor stopped');
    return { released };
  }

  async #run(): Promise<void> {
    const { group, concurrency, batch, leaseMs, lookaheadMs } = this.#settings;
    if (this.#settings.paused) {
      await new Promise<void>((resolve) => {
        this.#resume = () => {
          resolve();
          this.#waker.poke(); // ends the wait below, so it holds on to nothing
        };
        // drain() while paused ends the wait too.
        this.#waker.wait(-1, false).then(() => resolve());
      });
    }
    while (this.#state === 'running') {
      const room = concurrency - this.#inFlight.size;
      if (room <= 0) {
        await this.#waker.wait(-1, false);
        continue;
      }
      clearTimeout(this.#ackTimer);
      this.#ackTimer = undefined;
      const ack = this.#takeFinished();
      const max = Math.min(room, batch);
      let polled: Awaited<ReturnType<Queue['poll']>>;
      try {
        polled = await this.#queue.poll(group, { max, leaseMs, ack, lookaheadMs });
      } catch (error) {
        this.#finished.push(...ack);
        this.#noteError('poll failed', error);
        await this.#waker.wait(ERROR_PAUSE_MS);
        continue;
      }
      for (const bad of polled.malformed) {
        this.#counters.dead++;
        this.#log.warn(
          { event: 'dead', job: bad.id, reason: bad.reason },
          'malformed message dead-lettered',
        );
      }
      const now = this.#redisNow();
      for (const message of polled.messages) this.#schedule(message, now);
      if (polled.messages.length === max) continue;
      const sleep =
        polled.nextDueAt < 0
          ? -1
          : Math.max(0, polled.nextDueAt - this.#redisNow() - WAKE_EARLY_MS);
      await this.#waker.wait(sleep);
    }
  }

  #redisNow(): number {
    return localNow() + this.#queue.clock.offset;
  }

  /** Starts the message now, or at its due time when it was leased ahead. */
  #schedule(message: Message, now: number): void {
    this.#counters.claimed++;
    // Only a handler with a time limit needs a signal of its own.
    this.#inFlight.set(message.id, this.#settings.timeoutMs > 0 ? new AbortController() : null);
    this.#startTimer.add(message, now);
  }

  // The hot path: a handler that returns at once costs no promise at all.
  #start(message: Message, now: number): void {
    this.#lateness.recordMs(now - message.dueAt);
    let result: unknown;
    try {
      result = this.#invoke(message);
    } catch (error) {
      this.#failed(message, error).finally(() => this.#finish(message));
      return;
    }
    if (!isThenable(result)) {
      this.#succeeded(message);
      return;
    }
    result.then(
      () => this.#succeeded(message),
      (error: unknown) => this.#failed(message, error).finally(() => this.#finish(message)),
    );
  }

  #invoke(message: Message): unknown {
    const own = this.#inFlight.get(message.id) ?? null;
    return invokeHandler(
      this.#handler,
      message,
      this.#shutdown.signal,
      own,
      this.#settings.timeoutMs,
    );
  }

  #succeeded(message: Message): void {
    this.#counters.done++;
    this.#finished.push(message.id);
    this.#log.debug({ event: 'done', job: message.id }, 'done');
    this.#finish(message);
  }

  #finish(message: Message): void {
    const wasFull = this.#inFlight.size >= this.#settings.concurrency;
    this.#inFlight.delete(message.id);
    // A full actor polls at once (it has room again); otherwise acks ride on the
    // next poll, or go after a short pause, so a trickle does not cost a call each.
    if (wasFull || this.#finished.length >= this.#settings.batch) this.#waker.poke();
    else this.#ackTimer ??= setTimeout(() => this.#waker.poke(), ACK_DELAY_MS);
  }

  async #failed(message: Message, error: unknown): Promise<void> {
    this.#counters.failed++;
    const text = error instanceof Error ? error.message : String(error);
    try {
      const outcome = await this.#queue.fail(this.#settings.group, message.id, text);
      if (outcome === 'retry') this.#counters.retried++;
      if (outcome === 'dead') this.#counters.dead++;
      const level = outcome === 'dead' ? 'error' : 'warn';
      this.#log[level](
        {
          event: outcome === 'dead' ? 'dead' : 'failed',
          job: message.id,
          attempt: message.attempts,
          err: text,
          outcome,
        },
        'handler failed',
      );
    } catch (failError) {
      // The lease will expire and the message comes back: nothing is lost.
      this.#noteError(`could not record the failure of ${message.id}`, failError);
    }
  }

  async #renewLeases(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    try {
      await this.#queue.extendLease(
        this.#settings.group,
        [...this.#inFlight.keys()],
        this.#settings.leaseMs,
      );
    } catch (error) {
      this.#noteError('lease renewal failed', error);
    }
  }

  #takeFinished(): string[] {
    const ids = this.#finished;
    this.#finished = [];
    return ids;
  }

  #noteError(what: string, error: unknown): void {
    this.#lastError = `${what}: ${error instanceof Error ? error.message : String(error)}`;
    this.#log.error({ event: 'error', err: error }, what);
  }
}
