// Due times are computed by the producer (formatting numbers is slow inside
// Lua) but must be on Redis's clock, which every consumer reads with TIME.
// This keeps the offset between the two, measured from TIME round trips.
import type { RedisClient } from './redis/connection.js';

const REFRESH_MS = 60_000;
const SAMPLES = 10;

export class RedisClock {
  readonly #client: RedisClient;
  #offset = 0;
  #measuredAt = 0;
  #measuring: Promise<void> | null = null;

  constructor(client: RedisClient) {
    this.#client = client;
  }

  /** Redis time in ms; measures the offset first if it never did. */
  async now(): Promise<number> {
    if (this.#measuredAt === 0) await this.measure();
    return Date.now() + this.offset;
  }

  /** Redis time minus local time, in ms, as last measured. */
  get offset(): number {
    if (Date.now() - this.#measuredAt > REFRESH_MS) void this.measure().catch(() => undefined);
    return this.#offset;
  }

  measure(): Promise<void> {
    this.#measuring ??= this.#sample().finally(() => {
      this.#measuring = null;
    });
    return this.#measuring;
  }

  async #sample(): Promise<void> {
    // Keep the tightest of ten round trips: the first one can wait behind the connection
    // handshake and the script loads (ready() runs them together), and the midpoint of a long
    // round trip put the clock several ms ahead of Redis even on loopback.
    let best = { roundTrip: Number.POSITIVE_INFINITY, offset: 0, received: 0 };
    for (let i = 0; i < SAMPLES; i++) {
      const sent = Date.now();
      const [seconds, micros] = await this.#client.time();
      const received = Date.now();
      const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
      if (received - sent < best.roundTrip) {
        best = { roundTrip: received - sent, offset: redisMs - (sent + received) / 2, received };
      }
    }
    this.#offset = Math.round(best.offset);
    this.#measuredAt = best.received;
  }
}
