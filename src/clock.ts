// Redis's clock, as seen from this process. Due times are on Redis's clock
// (scripts read TIME), but producers compute them (formatting numbers is slow
// inside Lua). A reading of TIME is anchored to this process's monotonic
// clock: the estimate then moves with performance.now(), never with Date.now(),
// so a step of the wall clock here changes nothing.
import { performance } from 'node:perf_hooks';

const REFRESH_MS = 60_000;
const SAMPLES = 5;

/** Reads the server's TIME: [seconds, microseconds]. */
export type TimeReader = () => Promise<[string | number, string | number]>;

/** Redis time in ms at one instant of performance.now(). */
export interface Anchor {
  redisMs: number;
  mono: number;
}

/** The Redis time now, from an anchor. */
export const redisNowFrom = (anchor: Anchor): number =>
  anchor.redisMs + (performance.now() - anchor.mono);

export class RedisClock {
  readonly #read: TimeReader;
  #anchor: Anchor | null = null;
  #measuring: Promise<void> | null = null;

  constructor(read: TimeReader) {
    this.#read = read;
  }

  /** Redis time in ms; reads the server's clock first if it never did. */
  async now(): Promise<number> {
    if (!this.#anchor) await this.measure();
    const anchor = this.#anchor as unknown as Anchor;
    if (performance.now() - anchor.mono > REFRESH_MS) void this.measure().catch(() => undefined);
    return redisNowFrom(anchor);
  }

  measure(): Promise<void> {
    this.#measuring ??= this.#sample().finally(() => {
      this.#measuring = null;
    });
    return this.#measuring;
  }

  // Keep the tightest of a few round trips: the first can wait behind the connection
  // handshake and the script loads, and the midpoint of a long round trip is far off.
  async #sample(): Promise<void> {
    let best = { roundTrip: Number.POSITIVE_INFINITY, anchor: null as Anchor | null };
    for (let i = 0; i < SAMPLES; i++) {
      const sent = performance.now();
      const [seconds, micros] = await this.#read();
      const received = performance.now();
      if (received - sent < best.roundTrip) {
        const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
        best = { roundTrip: received - sent, anchor: { redisMs, mono: (sent + received) / 2 } };
      }
    }
    this.#anchor = best.anchor;
  }
}
