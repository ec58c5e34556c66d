// How an idle actor waits: one BLPOP on the group's wake list, kept on a
// connection of its own, raced against a timer set for the next due time.
// Producers push a token when they add a message due earlier than anything
// pending, so the actor sleeps in Redis instead of polling, yet wakes on the
// millisecond (Redis's own BLPOP timeouts are only as fine as its `hz`).
import type { RedisClient } from '../redis/connection.js';

/** Longest single BLPOP; a new one starts when it ends empty. */
const BLOCK_SECONDS = 30;

export type WakeReason = 'token' | 'timer' | 'poke' | 'closed';

export class Waker {
  readonly #blocker: RedisClient;
  readonly #wakeKey: string;
  #blocking = false;
  #pending: WakeReason | null = null;
  #resolve: ((reason: WakeReason) => void) | null = null;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(blocker: RedisClient, wakeKey: string) {
    this.#blocker = blocker;
    this.#wakeKey = wakeKey;
  }

  /**
   * Resolves on a producer's token (when `listen`), after `ms` (never when ms < 0),
   * or on poke(). A token or poke that came while the actor was busy ends the next
   * wait at once. An actor with no room for work does not listen, leaving tokens
   * to idle siblings.
   */
  wait(ms: number, listen = true): Promise<WakeReason> {
    if (this.#closed) return Promise.resolve('closed');
    if (this.#pending) {
      const reason = this.#pending;
      this.#pending = null;
      return Promise.resolve(reason);
    }
    if (listen) this.#block();
    return new Promise((resolve) => {
      this.#resolve = resolve;
      if (ms >= 0) this.#timer = setTimeout(() => this.#fire('timer'), ms);
    });
  }

  /** Ends the current wait (a handler finished, shutdown began). */
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

  // Only an actor that waits holds a BLPOP, so a token goes to an idle one.
  #block(): void {
    if (this.#blocking || this.#closed) return;
    this.#blocking = true;
    this.#blocker.blpop(this.#wakeKey, BLOCK_SECONDS).then(
      (reply) => {
        this.#blocking = false;
        if (reply) this.#fire('token');
        else if (this.#resolve) this.#block();
      },
      () => {
        // Connection trouble: ioredis reconnects; try again shortly while waiting.
        this.#blocking = false;
        setTimeout(() => this.#resolve && this.#block(), 1000).unref();
      },
    );
  }
}
