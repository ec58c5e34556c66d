// An actor's side of the rate limits: the RateGate's calls with the actor's waiting, error
// handling and figures around them, so the actor's loop stays one line per step.
import type { Message } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import type { ActorSettings } from './actor-types.js';
import type { Logger } from './logger.js';
import type { NoteRate } from './note-rate.js';
import { RateGate } from './rate-gate.js';
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
    this.#gate = new RateGate(
      parts.settings.rateLimit,
      parts.queue.rateLimits,
      parts.settings.group,
    );
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

  /**
   * The leased messages to run now; the ones a per-name limit holds back go back to wait
   * (no attempt counted). If that fails, they are handed back as at a shutdown.
   */
  async admit(messages: Message[], allowed: number): Promise<Message[]> {
    if (!this.#gate.limited) return messages;
    try {
      const { run, heldBack } = await this.#gate.admit(messages, allowed);
      if (heldBack > 0) this.#parts.stats.add('heldBack', heldBack);
      return run;
    } catch (error) {
      this.#parts.errors.note('rate limit: could not take tokens', error, this.#parts.stats);
      // Uncounted; should Redis be gone, their leases run out and they come back anyway.
      await this.#parts.queue.release(messages).catch(() => undefined);
      return [];
    }
  }
}
