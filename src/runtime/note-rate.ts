// Errors an actor keeps meeting (Redis away, a key of the wrong type) are
// logged when they first appear or change, then at most once a minute with
// how many were held back: one line a minute, not one every half second.
import { newerFormatOf } from '../redis/explain.js';
import type { Logger } from './logger.js';
import type { StatBlock } from './stat-block.js';

const EVERY_MS = 60_000;

export class NoteRate {
  readonly #log: Logger;
  #last = '';
  #loggedAt = 0;
  #held = 0;
  /**
   * Takes a refusal for a newer data format instead of logging it: the actor halts and says
   * so in one line (actor-claim.ts), where a renewal, an ack or the flow relay refused first
   * would log a line of its own and take the halt's place as the last error. False when the
   * actor does not halt (draining): the refusal is logged as any error.
   */
  newer: ((stored: number | '?') => boolean) | undefined;

  constructor(log: Logger) {
    this.#log = log;
  }

  note(what: string, error: unknown, stats: StatBlock): void {
    const stored = newerFormatOf(error);
    if (stored !== null && this.newer?.(stored)) return;
    const text = `${what}: ${error instanceof Error ? error.message : String(error)}`;
    stats.lastError = text;
    const now = Date.now();
    if (text === this.#last && now - this.#loggedAt < EVERY_MS) {
      this.#held++;
      return;
    }
    const repeats = this.#held > 0 ? { repeats: this.#held } : {};
    this.#log.error({ event: 'error', err: text, ...repeats }, what);
    this.#last = text;
    this.#loggedAt = now;
    this.#held = 0;
  }
}
