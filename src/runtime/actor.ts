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
import { SkyqError } from '../base/errors.js';
import { FORMAT_VERSION } from '../base/format-version.js';
import { ReplyClock } from '../queue/clock.js';
import type { Message, PollResult } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import { formatRefusal } from '../redis/explain.js';
import { ActorLimits } from './actor-limits.js';
import { ActorModes } from './actor-modes.js';
import type { ActorApi, ActorSettings, Handler } from './actor-types.js';
import { Jobs } from './jobs.js';
import type { ActorStat } from './launcher-stats.js';
import type { Logger } from './logger.js';
import { NoteRate } from './note-rate.js';
import { PauseWindows } from './pause-windows.js';
import { StatBlock } from './stat-block.js';
import { every, later } from './timers.js';
import type { Waker } from './waker.js';

export type { ActorApi, ActorSettings, Handler, JobContext } from './actor-types.js';

const ERROR_PAUSE_MS = 500;
const MAX_ERROR_PAUSE_MS = 5000;
/** A group whose data format is newer than ours is looked at again this often. */
const HALTED_RECHECK_MS = 1000;
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
/**
 * How often the actor relays its group's flow outbox (queue/flows/relay.ts): what a kill -9
 * between a child's ack and its parent's update left there is moved within this long.
 */
const FLOW_SWEEP_MS = 5000;

export class Actor {
  readonly #settings: ActorSettings;
  readonly #queue: Queue;
  readonly #waker: Waker;
  readonly #log: Logger;
  readonly #stats: StatBlock;
  readonly #jobs: Jobs;
  readonly #limits: ActorLimits;
  /** Redis's clock, from the claims' replies: never ahead, never moved by the wall clock */
  readonly #clock = new ReplyClock();
  #loop: Promise<void> = Promise.resolve();
  #housekeeping: NodeJS.Timeout | undefined;
  #flowSweep: NodeJS.Timeout | undefined;
  #ackTimer: NodeJS.Timeout | undefined;
  readonly #errors: NoteRate;
  #resume: () => void = () => undefined;
  readonly #pauses = new PauseWindows();
  readonly #modes: ActorModes;

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
    this.#log = log;
    this.#stats = stats;
    this.#errors = new NoteRate(log);
    this.#jobs = new Jobs({
      settings,
      queue,
      handler,
      log,
      stats,
      errors: this.#errors,
      now: () => this.#clock.now(),
      pauses: this.#pauses,
      ended: () => this.#ended(),
    });
    this.#limits = new ActorLimits({
      settings,
      queue,
      waker,
      log,
      stats,
      errors: this.#errors,
      takeAcks: () => this.#takeAcks(),
      putBack: (acks) => this.#jobs.putBack(acks),
    });
    stats.startedAt = Date.now();
    stats.state = 'starting';
    this.#modes = new ActorModes(stats, settings.group);
    stats.set('inFlight', 0);
  }

  start(): void {
    this.#modes.enter('running');
    const { leaseMs, timeoutMs } = this.#settings;
    // One timer renews leases (a third of the way through) and times out handlers.
    const tick = Math.min(leaseMs / 3, timeoutMs > 0 ? Math.max(50, timeoutMs / 10) : 1000);
    this.#housekeeping = every(() => this.#jobs.housekeep(), Math.max(50, Math.floor(tick)));
    // The group's flow outbox: once soon after the start (what a crash left), then regularly.
    const sweep = () => this.#sweepFlows();
    this.#flowSweep = later(
      () => {
        sweep();
        this.#flowSweep = every(sweep, FLOW_SWEEP_MS);
      },
      Math.floor(Math.random() * 1000),
    );
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
    if (!this.#modes.looping) return { released: 0 };
    this.#modes.enter('draining');
    this.#waker.poke();
    await this.#loop;
    this.#jobs.stopStarting();
    await this.#settle(graceMs);
    if (this.#jobs.size > 0) {
      this.#jobs.abortRunning(new Error('the actor is shutting down'));
      await this.#settle(ABORT_GRACE_MS);
    }
    clearInterval(this.#housekeeping);
    clearInterval(this.#flowSweep); // a timeout first, then an interval: this clears either
    clearTimeout(this.#ackTimer);
    const { finished, handBack, stuck } = await this.#jobs.close();
    let released = 0;
    try {
      await this.#queue.ack(finished);
      released += await this.#queue.release(handBack);
      released += await this.#queue.release(stuck, { attempted: true });
    } catch (error) {
      // Redis is gone: the leases will expire and the messages come back anyway.
      this.#log.error({ event: 'drain-error', err: error }, 'could not hand leases back');
    }
    this.#modes.enter('stopped');
    const counters = this.#stats.counters();
    this.#log.info(
      { event: 'stopped', released, stuck: stuck.length, ...counters },
      'actor stopped',
    );
    return { released };
  }

  async #settle(ms: number): Promise<void> {
    const deadline = performance.now() + ms;
    while (this.#jobs.size > 0 && performance.now() < deadline) {
      await this.#waker.wait(deadline - performance.now(), false);
    }
  }

  async #run(): Promise<void> {
    if (this.#settings.paused) {
      // Started paused: what fell due meanwhile is late from the resume.
      this.#pauses.paused(this.#redisNow());
      await this.#waitForResume();
      this.#pauses.resumed(this.#redisNow());
    }
    let errorPause = ERROR_PAUSE_MS;
    while (this.#modes.looping) {
      const room = this.#settings.concurrency - this.#jobs.size;
      this.#waker.full = room <= 0;
      if (room <= 0) {
        await this.#waker.wait(-1, false);
        continue;
      }
      // With a rate limit, the claim leases no more than the tokens taken for it.
      const max = await this.#limits.allow(Math.min(room, this.#settings.batch));
      if (max === 0) continue;
      const ack = this.#takeAcks();
      const polled = await this.#poll(max, ack);
      if (!polled) {
        await this.#limits.settle(null, max); // hands its tokens back
        this.#jobs.putBack(ack);
        // Halted: a newer format is a state, not trouble: look again each second, no backoff.
        await this.#waker.wait(this.#modes.now === 'halted' ? HALTED_RECHECK_MS : errorPause);
        errorPause = Math.min(MAX_ERROR_PAUSE_MS, errorPause * 2);
        continue;
      }
      errorPause = ERROR_PAUSE_MS;
      if (this.#modes.now === 'halted' && this.#modes.enter('running'))
        this.#log.warn({ event: 'format-ok' }, 'the data format is ours again: claiming again');
      await this.#limits.settle(polled, max);
      if (polled.paused) this.#pauses.paused(polled.now);
      else this.#pauses.resumed(polled.now);
      // A drain that began while the claim was on its way keeps its mode: what the claim
      // leased is scheduled below and finished or handed back by the drain.
      const next = polled.paused ? 'paused' : 'running';
      if (this.#modes.looping && this.#modes.enter(next)) {
        this.#log.info(
          { event: this.#modes.now },
          polled.paused ? 'group paused' : 'group resumed',
        );
      }
      if (polled.paused) {
        await this.#waker.wait(PAUSED_RECHECK_MS);
        continue;
      }
      const now = this.#redisNow();
      for (const message of polled.messages) this.#jobs.schedule(message, now);
      if (polled.messages.length === max) continue;
      // Messages a rate limit holds back go when their name's tokens should be there.
      const retryIn = this.#limits.retryInMs();
      const planned = polled.nextDueAt < 0 ? Number.POSITIVE_INFINITY : polled.nextDueAt;
      await this.#idle(retryIn === null ? planned : Math.min(planned, now + retryIn));
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
      const limits = this.#limits.claimLimits();
      polled = await this.#queue.poll(group, { max, leaseMs, ack, lookaheadMs, limits });
    } catch (error) {
      const newer = error instanceof SkyqError && error.code === 'ERR_SKYQ_FORMAT';
      if (!newer) this.#errors.note('poll failed', error, this.#stats);
      else if (this.#modes.enter('halted')) {
        const stored = formatRefusal(error.cause)?.stored ?? '?';
        const line = `a newer skyq (format ${stored}) is running on this Redis; this launcher (format ${FORMAT_VERSION}) stops claiming`;
        this.#stats.lastError = line;
        this.#log.error({ event: 'format-newer', format: stored }, line);
      }
      return null;
    }
    const received = performance.now();
    this.#stats.redisRtt.record(received - sent);
    this.#clock.observe(polled.now, sent, received);
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

  /** One relay round of the group's flow outbox; a failure is noted, the next one retries. */
  #sweepFlows(): void {
    if (this.#modes.now === 'halted') return;
    this.#queue.flows.sweep(this.#settings.group).then(
      () => undefined,
      (error: unknown) => this.#errors.note('flow outbox relay failed', error, this.#stats),
    );
  }

  /** What finished, to ack with the next claim (or alone, while waiting for tokens). */
  #takeAcks(): Message[] {
    clearTimeout(this.#ackTimer);
    this.#ackTimer = undefined;
    return this.#jobs.takeFinished();
  }

  #redisNow(): number {
    return this.#clock.now();
  }

  /** A handler ended: its ack rides on the next poll, or goes after a short pause. */
  #ended(): void {
    // A full actor polls at once (it has room again); a trickle does not cost a call each.
    const wasFull = this.#jobs.size === this.#settings.concurrency - 1;
    const many = this.#jobs.finishedCount >= this.#settings.batch;
    if (wasFull || many || this.#modes.now === 'draining') {
      this.#waker.poke();
    } else {
      this.#ackTimer ??= later(() => {
        this.#ackTimer = undefined;
        this.#waker.poke();
      }, ACK_DELAY_MS);
    }
  }
}
