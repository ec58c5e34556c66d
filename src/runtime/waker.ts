// How an idle actor waits: one BLPOP on the group's wake list, kept on a
// connection of its own, raced against a timer set for the next due time.
// Producers push a token when they add a message due before the time the
// group's consumers will look anyway, so the actor sleeps in Redis instead of
// polling, yet wakes on the millisecond (Redis's own BLPOP timeouts are only
// as fine as its `hz`). The token is the earliest due time nobody was told of
// (0: ready now), so an actor can sleep on until just before it.
import type { RedisClient } from '../redis/connection.js';
import { later } from './timers.js';

/** Longest single BLPOP; a new one starts when it ends empty. */
const BLOCK_SECONDS = 30;

export type WakeReason = 'token' | 'timer' | 'poke' | 'closed';

export class Waker {
  readonly #blocker: RedisClient;
  readonly #wakeKey: string;
  #blocking = false;
  #listening = false;
  #pending: WakeReason | null = null;
  #resolve: ((reason: WakeReason) => void) | null = null;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** the due time (Redis ms) the last token carried; 0 = work is ready now */
  tokenDue = 0;
  /**
   * Set by the actor while it has no room for work. A BLPOP cannot be called off, so one left
   * from an earlier wait may still take a token; a full actor hands it on to an idle sibling
   * (another launcher's actor of the same group) instead of sitting on it.
   */
  full = false;

  constructor(blocker: RedisClient, wakeKey: string) {
    this.#blocker = blocker;
    this.#wakeKey = wakeKey;
  }

  /**
   * Resolves on a producer's token (when `listen`), after `ms` (never when ms < 0),
   * or on poke(). A poke or token that came while the actor was busy ends the next
   * wait at once.
   */
  wait(ms: number, listen = true): Promise<WakeReason> {
    if (this.#closed) return Promise.resolve('closed');
    if (this.#pending) {
      const reason = this.#pending;
      this.#pending = null;
      return Promise.resolve(reason);
    }
    this.#listening = listen;
    if (listen) this.#block();
    return new Promise((resolve) => {
      this.#resolve = resolve;
      if (ms >= 0) this.#timer = later(() => this.#fire('timer'), ms);
    });
  }

  /** Ends the current wait (a handler finished, shutdown began, the watcher saw work). */
  poke(): void {
    this.#fire('poke');
  }

  close(): void {
    this.#closed = true;
    this.#fire('closed');
    this.#blocker.disconnect();
  }

  #fire(reason: WakeReason): void {
    clearTimeout(this.#timer);
    const resolve = this.#resolve;
    this.#resolve = null;
    if (resolve) resolve(reason);
    else if (reason !== 'timer' && this.#pending === null) this.#pending = reason;
  }

  #token(due: number): void {
    if (this.#resolve && this.#listening) {
      this.tokenDue = due;
      this.#fire('token');
    } else if (this.full && !this.#closed) {
      this.#blocker.rpush(this.#wakeKey, String(due)).catch(() => undefined);
    } else if (this.#pending === null) {
      // Woken later for it: claim at once, whatever the due time was.
      this.tokenDue = 0;
      this.#pending = 'token';
    }
  }

  // Only an actor that waits with room for work starts a BLPOP.
  #block(): void {
    if (this.#blocking || this.#closed) return;
    this.#blocking = true;
    this.#blocker.blpop(this.#wakeKey, BLOCK_SECONDS).then(
      (reply) => {
        this.#blocking = false;
        if (reply) this.#token(Number(reply[1]) || 0);
        else if (this.#resolve && this.#listening) this.#block();
      },
      () => {
        // Connection trouble: ioredis reconnects; try again shortly while waiting.
        this.#blocking = false;
        later(() => this.#resolve && this.#listening && this.#block(), 1000).unref();
      },
    );
  }
}
