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
import type { ActorStat } from './launcher-stats.js';
import type { Logger } from './logger.js';
import { StartTimer } from './start-timer.js';
import { type ActorState, StatBlock, summaries } from './stat-block.js';
import type { Waker } from './waker.js';

export type { ActorApi, ActorSettings, Handler, JobContext } from './actor-types.js';

const ERROR_PAUSE_MS = 500;
/** A paused group is looked at again this often, besides the token resume() pushes. */
const PAUSED_RECHECK_MS = 5000;
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
  readonly #stats: StatBlock;
  /** running or waiting for their due time; a controller when the handler has a time limit */
  readonly #inFlight = new Map<string, AbortController | null>();
  /** aborted when shutdown gives up on running handlers */
  readonly #shutdown = new AbortController();
  readonly #startTimer = new StartTimer<Message>(
    () => this.#redisNow(),
    (message, now) => this.#start(message, now),
  );
  #finished: string[] = [];
  #loop: Promise<void> = Promise.resolve();
  #leaseTimer: NodeJS.Timeout | undefined;
  #ackTimer: NodeJS.Timeout | undefined;
  #resume: () => void = () => undefined;

  constructor(
    settings: ActorSettings,
    queue: Queue,
    waker: Waker,
    handler: Handler,
    log: Logger,
    stats = new StatBlock(),
  ) {
    this.#stats = stats;
    stats.startedAt = Date.now();
    stats.state = 'starting';
    stats.set('inFlight', 0);
    this.#settings = settings;
    this.#queue = queue;
    this.#waker = waker;
    this.#handler = handler;
    this.#log = log;
  }

  get #state(): ActorState {
    return this.#stats.state;
  }

  set #state(state: ActorState) {
    this.#stats.state = state;
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
    const figures = this.#stats.figures();
    return {
      ...figures,
      group: this.#settings.group,
      threadId,
      summary: summaries(figures.histograms),
    };
  }

  /** Stop claiming, let handlers finish for up to graceMs, hand the rest back. */
  async drain(graceMs: number): Promise<{ released: number }> {
    if (this.#state !== 'running' && this.#state !== 'paused') return { released: 0 };
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
    this.#log.info({ event: 'stopped', released, ...this.#stats.counters() }, 'actor stopped');
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
    while (this.#state === 'running' || this.#state === 'paused') {
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
        const sent = performance.now();
        polled = await this.#queue.poll(group, { max, leaseMs, ack, lookaheadMs });
        this.#stats.redisRtt.record(performance.now() - sent);
      } catch (error) {
        this.#finished.push(...ack);
        this.#noteError('poll failed', error);
        await this.#waker.wait(ERROR_PAUSE_MS);
        continue;
      }
      for (const bad of polled.malformed) {
        this.#stats.add('dead');
        this.#log.warn(
          { event: 'dead', job: bad.id, reason: bad.reason },
          'malformed message dead-lettered',
        );
      }
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
    this.#stats.add('claimed');
    // Only a handler with a time limit needs a signal of its own.
    this.#inFlight.set(message.id, this.#settings.timeoutMs > 0 ? new AbortController() : null);
    this.#stats.set('inFlight', this.#inFlight.size);
    this.#startTimer.add(message, now);
  }

  // The hot path: a handler that returns at once costs no promise at all.
  #start(message: Message, now: number): void {
    this.#stats.lateness.record(now - message.dueAt);
    const began = performance.now();
    let result: unknown;
    try {
      result = this.#invoke(message);
    } catch (error) {
      this.#stats.handler.record(performance.now() - began);
      this.#failed(message, error).finally(() => this.#finish(message));
      return;
    }
    if (!isThenable(result)) {
      this.#stats.handler.record(performance.now() - began);
      this.#succeeded(message);
      return;
    }
    result.then(
      () => {
        this.#stats.handler.record(performance.now() - began);
        this.#succeeded(message);
      },
      (error: unknown) => {
        this.#stats.handler.record(performance.now() - began);
        this.#failed(message, error).finally(() => this.#finish(message));
      },
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
    this.#stats.add('done');
    this.#finished.push(message.id);
    this.#log.debug({ event: 'done', job: message.id }, 'done');
    this.#finish(message);
  }

  #finish(message: Message): void {
    const wasFull = this.#inFlight.size >= this.#settings.concurrency;
    this.#inFlight.delete(message.id);
    this.#stats.set('inFlight', this.#inFlight.size);
    // A full actor polls at once (it has room again); otherwise acks ride on the
    // next poll, or go after a short pause, so a trickle does not cost a call each.
    if (wasFull || this.#finished.length >= this.#settings.batch) this.#waker.poke();
    else this.#ackTimer ??= setTimeout(() => this.#waker.poke(), ACK_DELAY_MS);
  }

  async #failed(message: Message, error: unknown): Promise<void> {
    this.#stats.add('failed');
    const text = error instanceof Error ? error.message : String(error);
    try {
      const outcome = await this.#queue.fail(this.#settings.group, message.id, text);
      if (outcome === 'retry') this.#stats.add('retried');
      if (outcome === 'dead') this.#stats.add('dead');
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
    this.#stats.lastError = `${what}: ${error instanceof Error ? error.message : String(error)}`;
    this.#log.error({ event: 'error', err: error }, what);
  }
}
