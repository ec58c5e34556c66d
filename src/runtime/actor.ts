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
import { ReplyClock } from '../queue/clock.js';
import type { Queue } from '../queue/queue.js';
import { ActorAcks } from './actor-acks.js';
import { ActorClaim } from './actor-claim.js';
import { ActorLimits } from './actor-limits.js';
import { ActorModes } from './actor-modes.js';
import { ActorRounds } from './actor-rounds.js';
import type { ActorApi, ActorSettings, Handler } from './actor-types.js';
import { Jobs } from './jobs.js';
import type { ActorStat } from './launcher-stats.js';
import { LeaseMirror } from './lease-mirror.js';
import type { Logger } from './logger.js';
import { NoteRate } from './note-rate.js';
import { PauseWindows } from './pause-windows.js';
import { StatBlock } from './stat-block.js';
import type { Waker } from './waker.js';

export type { ActorApi, ActorSettings, Handler, JobContext } from './actor-types.js';

const ERROR_PAUSE_MS = 500;
const MAX_ERROR_PAUSE_MS = 5000;
/** A group whose data format is newer than ours is looked at again this often. */
const HALTED_RECHECK_MS = 1000;
/** A paused group is looked at again this often, besides the token resume() pushes. */
const PAUSED_RECHECK_MS = 5000;
/** After the grace, handlers told to stop get this long to do so. */
const ABORT_GRACE_MS = 1000;

export class Actor {
  readonly #settings: ActorSettings;
  readonly #queue: Queue;
  readonly #waker: Waker;
  readonly #log: Logger;
  readonly #stats: StatBlock;
  readonly #jobs: Jobs;
  readonly #limits: ActorLimits;
  readonly #acks: ActorAcks;
  readonly #claim: ActorClaim;
  readonly #rounds: ActorRounds;
  /** Redis's clock, from the claims' replies: never ahead, never moved by the wall clock */
  readonly #clock = new ReplyClock();
  #loop: Promise<void> = Promise.resolve();
  #resume: () => void = () => undefined;
  readonly #pauses = new PauseWindows();
  readonly #modes: ActorModes;
  readonly #leases: LeaseMirror; // what it holds, for its supervisor should it die (lease-mirror.ts)

  constructor(
    settings: ActorSettings,
    queue: Queue,
    waker: Waker,
    handler: Handler,
    log: Logger,
    stats = new StatBlock(),
    leases = new LeaseMirror(),
  ) {
    this.#settings = settings;
    this.#leases = leases;
    this.#queue = queue;
    this.#waker = waker;
    this.#log = log;
    this.#stats = stats;
    const errors = new NoteRate(log);
    this.#jobs = new Jobs({
      settings,
      queue,
      handler,
      log,
      stats,
      errors,
      now: () => this.#clock.now(),
      pauses: this.#pauses,
      ended: () => this.#acks.ended(),
    });
    const draining = () => this.#modes.now === 'draining';
    this.#acks = new ActorAcks({ settings, waker, jobs: this.#jobs, draining });
    this.#limits = new ActorLimits({
      settings,
      queue,
      waker,
      log,
      stats,
      errors,
      takeAcks: () => this.#acks.take(),
      putBack: (acks) => this.#jobs.putBack(acks),
    });
    this.#claim = new ActorClaim({
      settings,
      queue,
      log,
      stats,
      errors,
      limits: this.#limits,
      clock: this.#clock,
      // Draining, a refused claim changes nothing: the drain finishes what the actor holds.
      halt: () => this.#modes.looping && this.#modes.enter('halted'),
    });
    const halted = () => this.#modes.now === 'halted';
    errors.newer = (stored) => this.#claim.refusedNewer(stored) || halted();
    this.#rounds = new ActorRounds({ settings, queue, jobs: this.#jobs, stats, errors, halted });
    stats.startedAt = Date.now();
    stats.state = 'starting';
    this.#modes = new ActorModes(stats, settings.group);
    stats.set('inFlight', 0);
  }

  start(): void {
    this.#modes.enter('running');
    this.#rounds.start();
    this.#loop = this.#run();
    const { group: _group, ...settings } = this.#settings;
    this.#log.info({ event: 'started', ...settings }, 'actor started');
  }

  /** Runs `chore` on each of the actor's chores rounds (actor-rounds.ts), from start to drain. */
  addChore(chore: () => void): void {
    this.#rounds.addChore(chore);
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
    this.#rounds.stop();
    this.#acks.stop();
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
      // Just after a claim that filled the room, the next may wait for what it leased ahead.
      const at = this.#claim.claimLater(this.#jobs.waitingUntil, this.#redisNow());
      if (at !== null) {
        await this.#idle(at); // any wake ends it: the acks' timer, a token, a poke
        continue;
      }
      // With a rate limit, the claim leases no more than the tokens taken for it.
      const max = await this.#limits.allow(Math.min(room, this.#settings.batch));
      if (max === 0) continue;
      const ack = this.#acks.take();
      // A claim refused for a newer data format enters 'halted' (the claim's halt()).
      const polled = await this.#claim.poll(max, ack);
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
        // Watched while paused: a resume whose token went to another launcher's actor of this
        // group reaches this one through the launcher's watcher (watcher.ts), not in 5 s.
        this.#stats.plannedAt = polled.now + PAUSED_RECHECK_MS;
        await this.#waker.wait(PAUSED_RECHECK_MS);
        this.#stats.plannedAt = 0;
        continue;
      }
      const now = this.#redisNow();
      const claim = this.#leases.hold(polled.messages);
      for (const message of polled.messages) this.#jobs.schedule(message, now, claim);
      if (polled.messages.length > 0) this.#rounds.busy();
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
      const early = this.#claim.wakeEarlyMs;
      // Nothing planned (-1): wait for a token or a poke only.
      const sleep =
        plan === Number.POSITIVE_INFINITY ? -1 : Math.max(0, plan - this.#redisNow() - early);
      const reason = await this.#waker.wait(sleep);
      const due = this.#waker.tokenDue;
      if (reason !== 'token' || due - this.#redisNow() <= early) break;
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

  #redisNow(): number {
    return this.#clock.now();
  }
}
