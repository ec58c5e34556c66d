// An actor's claim: one Queue.poll with the actor's settings and rate limits, timed for the
// round-trip histogram and the actor's clock, with what its reply reports (acks refused as
// stale, malformed messages dead-lettered) counted and logged. A failure is noted, never
// thrown: the loop waits and claims again.
import { performance } from 'node:perf_hooks';
import { FORMAT_VERSION } from '../base/format-version.js';
import type { ReplyClock } from '../queue/clock.js';
import type { Message, PollResult } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import { newerFormatOf } from '../redis/explain.js';
import type { ActorLimits } from './actor-limits.js';
import type { ActorSettings } from './actor-types.js';
import type { Logger } from './logger.js';
import type { NoteRate } from './note-rate.js';
import type { StatBlock } from './stat-block.js';

export interface ActorClaimParts {
  settings: ActorSettings;
  queue: Queue;
  log: Logger;
  stats: StatBlock;
  errors: NoteRate;
  limits: ActorLimits;
  /** the actor's clock: each reply's `now` feeds it */
  clock: ReplyClock;
  /** the claim was refused for a newer data format: halt (false when halted already) */
  halt(): boolean;
}

/**
 * An actor wakes at least this long before the next due time, so that its claim's round trip
 * fits before it (wakeEarlyMs: longer while claims take longer).
 */
export const WAKE_EARLY_MS = 3;
/** How many of the latest claims wakeEarlyMs looks at: a slow one counts for this many more. */
const TRIPS_KEPT = 8;
/**
 * An actor claims this long (and wakeEarlyMs) before its last leased-ahead message is due
 * (claimLater): room for the claim's round trip on a loaded machine. At 25,
 * test/runtime-claim-batches made 225 calls instead of 161; the seed's lateness was the same.
 */
const CLAIM_AHEAD_MS = 10;

export class ActorClaim {
  readonly #parts: ActorClaimParts;
  /** the next due time (Redis ms) the last claim reported: nothing in Redis is due sooner */
  #nextDue = Number.POSITIVE_INFINITY;
  /** the last claim leased all it asked for: the room it had is full */
  #filled = false;
  /** the latest claims' round trips (ms), sent to decoded: a ring of TRIPS_KEPT */
  readonly #trips: number[] = [];
  #tripAt = 0;

  constructor(parts: ActorClaimParts) {
    this.#parts = parts;
  }

  /** One claim; null when it failed (noted). Its `now` feeds the actor's clock. */
  async poll(max: number, ack: Message[]): Promise<PollResult | null> {
    const { settings, queue, log, stats, errors, limits, clock } = this.#parts;
    const { group, leaseMs, lookaheadMs } = settings;
    const sent = performance.now();
    let polled: PollResult;
    try {
      const claimLimits = limits.claimLimits();
      polled = await queue.poll(group, { max, leaseMs, ack, lookaheadMs, limits: claimLimits });
    } catch (error) {
      const stored = newerFormatOf(error);
      if (stored === null) errors.note('poll failed', error, stats);
      else this.refusedNewer(stored);
      this.#filled = false;
      return null;
    }
    this.#nextDue = polled.nextDueAt < 0 ? Number.POSITIVE_INFINITY : polled.nextDueAt;
    this.#filled = polled.messages.length === max;
    const received = performance.now();
    this.#trips[this.#tripAt] = received - sent;
    this.#tripAt = (this.#tripAt + 1) % TRIPS_KEPT;
    stats.redisRtt.record(received - sent);
    clock.observe(polled.now, sent, received);
    if (polled.stale.length > 0) {
      stats.add('stale', polled.stale.length);
      log.warn(
        { event: 'stale', jobs: polled.stale.slice(0, 20), count: polled.stale.length },
        'acks refused: those leases had expired and gone to another consumer',
      );
    }
    for (const bad of polled.malformed) {
      stats.add('dead');
      const fields = { event: 'dead', job: bad.message.id, reason: bad.reason };
      log.warn(fields, 'malformed message dead-lettered');
    }
    return polled;
  }

  /**
   * A call refused for data of format `stored`, newer than ours (this claim, or a renewal, ack
   * or relay through NoteRate.newer): the actor halts, saying so in one line. False when it did not halt now
   * (halted already, or draining).
   */
  refusedNewer(stored: number | '?'): boolean {
    if (!this.#parts.halt()) return false;
    const line = `a newer skyq (format ${stored}) is running on this Redis; this launcher (format ${FORMAT_VERSION}) stops claiming`;
    this.#parts.stats.lastError = line;
    this.#parts.log.error({ event: 'format-newer', format: stored }, line);
    return true;
  }

  /**
   * When an actor whose last claim filled its room claims next (Redis ms); null: now. Asked
   * once after each claim: any later wake (a token, the watcher's poke) may bring work due
   * before what that claim reported, and is claimed for at once. While messages it leased ahead
   * wait for their time (the last due at `lastWaiting`), Redis holds nothing due before the
   * next due time the last claim reported (now while a backlog waits; an add due sooner sends
   * a token, a raw member brings the watcher's poke), so one claim a little before that, or
   * before its last waiting message, takes a batch. Claiming each time a handler ended took ~3
   * messages a call in a stream of 2,000 a second, now ~37 (1,814 calls for 6,000 messages,
   * now 161: test/runtime-claim-batches), and a call costs Redis ~150 µs besides its messages.
   */
  claimLater(lastWaiting: number | null, now: number): number | null {
    const filled = this.#filled;
    this.#filled = false;
    if (!filled || lastWaiting === null) return null;
    const at = Math.min(lastWaiting - CLAIM_AHEAD_MS, this.#nextDue);
    return at - now > this.wakeEarlyMs ? at : null;
  }

  /**
   * How long before a due time the actor wakes to claim: the slowest of its latest claims
   * (sent to decoded) and 1 ms, at least WAKE_EARLY_MS. A fixed 3 ms left every message late
   * by the rest of the round trip wherever a claim takes longer: a Redis a few ms away
   * (test/runtime-wake-margin), and the first claims of a launcher, whose code is not compiled
   * yet (100 a group due 100 ms after their add: 28–36 ms late at the median, now 20–26).
   * Waking early costs nothing more: the claim leases what falls due within the lookahead, and
   * the start timer starts each at its time. Never more than half the lookahead: a claim must
   * still lease what woke it, or the actor would claim again and again until it is due.
   */
  get wakeEarlyMs(): number {
    const slowest = Math.max(0, ...this.#trips);
    const most = Math.max(WAKE_EARLY_MS, this.#parts.settings.lookaheadMs / 2);
    return Math.min(most, Math.max(WAKE_EARLY_MS, Math.ceil(slowest) + 1));
  }
}
