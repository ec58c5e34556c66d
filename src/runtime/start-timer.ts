// Starts leased-ahead messages at their due time with one timer for the
// earliest, not one per message: a claim can hand over hundreds at once.
// Node timers count whole milliseconds and may fire a little early, so each
// firing checks the clock and waits again for what is not due yet.
import { later } from './timers.js';

export interface Due {
  dueAt: number;
}

export class StartTimer<T extends Due> {
  readonly #now: () => number;
  readonly #start: (item: T, now: number) => void;
  /** waiting items, earliest due first */
  readonly #waiting: T[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(now: () => number, start: (item: T, now: number) => void) {
    this.#now = now;
    this.#start = start;
  }

  /** Starts the item now when it is due, else when it will be (`now` saves a clock read per item). */
  add(item: T, now = this.#now()): void {
    if (item.dueAt <= now) {
      this.#start(item, now);
      return;
    }
    // Claims come in due order, so this is nearly always an append.
    let at = this.#waiting.length;
    while (at > 0 && (this.#waiting[at - 1] as T).dueAt > item.dueAt) at--;
    this.#waiting.splice(at, 0, item);
    if (item.dueAt < this.#timerAt) this.#arm();
  }

  /** The due time of the last waiting item; null when none waits. */
  get lastDue(): number | null {
    return this.#waiting.at(-1)?.dueAt ?? null;
  }

  /** Forgets every waiting item and returns them (shutdown). */
  clear(): T[] {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    return this.#waiting.splice(0);
  }

  #arm(): void {
    clearTimeout(this.#timer);
    const first = this.#waiting[0];
    if (!first) {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      return;
    }
    this.#timerAt = first.dueAt;
    const wait = Math.max(1, Math.ceil(first.dueAt - this.#now()));
    this.#timer = later(() => this.#fire(), wait);
  }

  #fire(): void {
    const now = this.#now();
    let due = 0;
    while (due < this.#waiting.length && (this.#waiting[due] as T).dueAt <= now) due++;
    for (const item of this.#waiting.splice(0, due)) this.#start(item, now);
    this.#arm();
  }
}
