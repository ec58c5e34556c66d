// When an actor acks what its handlers finished: with the next claim, so a busy actor pays
// no call of its own for them; when no claim comes soon, a short timer pokes the loop into
// one. The actor's loop takes the batch (take()) for each claim it makes.
import type { Message } from '../queue/message.js';
import type { ActorSettings } from './actor-types.js';
import type { Jobs } from './jobs.js';
import { later } from './timers.js';
import type { Waker } from './waker.js';

/**
 * Finished messages are acked with the next poll, or after this long when no poll comes:
 * long enough for a steady trickle to ack on its claims, short enough to keep the
 * redeliveries a crash would cause (the finished, not yet acked) few.
 */
const ACK_DELAY_MS = 200;

export interface ActorAcksParts {
  settings: ActorSettings;
  waker: Waker;
  jobs: Jobs;
  /** the actor is draining: acks go at once */
  draining(): boolean;
}

export class ActorAcks {
  readonly #parts: ActorAcksParts;
  #timer: NodeJS.Timeout | undefined;

  constructor(parts: ActorAcksParts) {
    this.#parts = parts;
  }

  /** What finished, to ack with the next claim (or alone, while waiting for tokens). */
  take(): Message[] {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#parts.jobs.takeFinished();
  }

  /** A handler ended: its ack rides on the next poll, or goes after a short pause. */
  ended(): void {
    const { settings, waker, jobs } = this.#parts;
    if (jobs.finishedCount >= settings.batch || this.#parts.draining()) {
      waker.poke();
      return;
    }
    // A full actor has room again: its loop decides when to claim (actor-claim.ts claimLater).
    // That claim may wait, so the acks keep their own timer; a trickle costs no call each.
    if (jobs.size === settings.concurrency - 1) waker.poke();
    this.#timer ??= later(() => {
      this.#timer = undefined;
      waker.poke();
    }, ACK_DELAY_MS);
  }

  /** The actor stops: no timer pokes it any more. */
  stop(): void {
    clearTimeout(this.#timer);
  }
}
