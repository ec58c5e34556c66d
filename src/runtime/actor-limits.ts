// An actor's side of the rate limits: the RateGate's calls with the actor's waiting, error
// handling and figures around them, so the actor's loop stays one line per step.
import type { Message, PollResult } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import type { ActorSettings } from './actor-types.js';
import type { Logger } from './logger.js';
import type { NoteRate } from './note-rate.js';
import { type ClaimLimits, RateGate } from './rate-gate.js';
import type { StatBlock } from './stat-block.js';
import type { Waker } from './waker.js';

export interface ActorLimitsParts {
  settings: ActorSettings;
  queue: Queue;
  waker: Waker;
  log: Logger;
  stats: StatBlock;
  errors: NoteRate;
  /** what finished meanwhile, to ack: a wait for tokens must not hold acks back */
  takeAcks(): Message[];
  /** acks that could not go out, for the next claim */
  putBack(acks: Message[]): void;
}

const ERROR_PAUSE_MS = 500;

export class ActorLimits {
  readonly #parts: ActorLimitsParts;
  readonly #gate: RateGate;

  constructor(parts: ActorLimitsParts) {
    this.#parts = parts;
    this.#gate = new RateGate(parts.settings.rateLimit, parts.queue.rateLimits);
  }

  /**
   * How many the next claim may lease: `want` without a limit; 0 after waiting for tokens
   * or after a failed take (noted): ask again.
   */
  async allow(want: number): Promise<number> {
    if (!this.#gate.limited) return want;
    let allowance: Awaited<ReturnType<RateGate['allow']>>;
    try {
      allowance = await this.#gate.allow(want);
    } catch (error) {
      this.#parts.errors.note('rate limit: could not take tokens', error, this.#parts.stats);
      await this.#parts.waker.wait(ERROR_PAUSE_MS, false);
      return 0;
    }
    if (allowance.max > 0) return allowance.max;
    await this.#ack();
    // A poke (a handler ended, shutdown) ends the wait; producers' tokens do not: no token
    // of ours is there to claim with.
    await this.#parts.waker.wait(allowance.waitMs, false);
    return 0;
  }

  async #ack(): Promise<void> {
    const acks = this.#parts.takeAcks();
    if (acks.length === 0) return;
    try {
      await this.#parts.queue.ack(acks);
    } catch (error) {
      this.#parts.putBack(acks);
      this.#parts.errors.note('ack failed', error, this.#parts.stats);
    }
  }

  /** The per-name limits the coming claim keeps (Queue.poll's `limits`); none without. */
  claimLimits(): ClaimLimits | undefined {
    return this.#gate.limited ? this.#gate.claimLimits() : undefined;
  }

  /**
   * After a claim (null: it failed): the tokens it did not use go back, and what it held
   * back is counted. Every message it leased runs: it leased none it had no token for.
   */
  async settle(polled: PollResult | null, allowed: number): Promise<void> {
    if (!this.#gate.limited) return;
    const heldBack = await this.#gate.settle(polled, allowed);
    if (heldBack > 0) this.#parts.stats.add('heldBack', heldBack);
  }

  /** How soon (ms) to claim again for messages held back in the group; null: none held. */
  retryInMs(): number | null {
    return this.#gate.limited ? this.#gate.retryInMs() : null;
  }
}
