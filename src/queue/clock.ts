// Redis's clock, as seen from this process. Due times are on Redis's clock
// (scripts read TIME), but producers compute them (formatting numbers is slow
// inside Lua). A reading of TIME is anchored to this process's monotonic
// clock: the estimate then moves with performance.now(), never with Date.now(),
// so a step of the wall clock here changes nothing.
import { performance } from 'node:perf_hooks';
import { isCluster, type RedisClient } from '../redis/connection.js';

const REFRESH_MS = 60_000;
const SAMPLES = 5;

/** Reads the server's TIME: [seconds, microseconds]. */
export type TimeReader = () => Promise<[string | number, string | number]>;

/** Redis time in ms at one instant of performance.now(). */
interface Anchor {
  redisMs: number;
  mono: number;
}

/** The Redis time at `at` (a performance.now() reading), from an anchor. */
const redisTimeAt = (anchor: Anchor, at: number): number => anchor.redisMs + (at - anchor.mono);

/**
 * Redis's clock as seen from this process: read once, then moved on by the local monotonic clock,
 * and read again now and then.
 */
export class RedisClock {
  readonly #read: TimeReader;
  #anchor: Anchor | null = null;
  #measuring: Promise<void> | null = null;

  constructor(read: TimeReader) {
    this.#read = read;
  }

  /**
   * Redis time in ms, now or at an earlier performance.now() reading `at` (so that one call's
   * delays all count from one instant); reads the server's clock first if it never did.
   */
  async now(at?: number): Promise<number> {
    if (!this.#anchor) await this.measure();
    const anchor = this.#anchor as unknown as Anchor;
    if (performance.now() - anchor.mono > REFRESH_MS) void this.measure().catch(() => undefined);
    return redisTimeAt(anchor, at ?? performance.now());
  }

  /** Reads Redis's TIME again (the estimate is anchored to this reading). */
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

/**
 * Redis's clock as seen from a Queue: one per server (on a cluster, per group's master; on a
 * standalone server the same one for every group). `time` reads a group's TIME by script,
 * which a cluster routes to the group's master.
 */
export class ServerClocks {
  readonly #client: RedisClient;
  readonly #time: (group: number) => Promise<unknown>;
  readonly #explain: (error: unknown) => unknown;
  readonly #clocks = new Map<number, RedisClock>();

  /**
   * `explain` turns what a read throws into the error every other call gives (a lost
   * connection: ERR_SKYQ_UNREACHABLE naming the server): TIME is no script, and its raw
   * ioredis error reached get()'s callers and the dashboard as it was.
   */
  constructor(
    client: RedisClient,
    time: (group: number) => Promise<unknown>,
    explain: (error: unknown) => unknown,
  ) {
    this.#client = client;
    this.#time = time;
    this.#explain = explain;
  }

  /** Redis's clock for a group's server. */
  of(group: number): RedisClock {
    const key = isCluster(this.#client) ? group : 0;
    let clock = this.#clocks.get(key);
    if (!clock) {
      const read = isCluster(this.#client)
        ? () => this.#time(group) as Promise<[string, string]>
        : () => this.#client.time() as Promise<[number, number]>;
      const explained = () =>
        read().catch((error: unknown) => {
          throw this.#explain(error);
        });
      clock = new RedisClock(explained);
      this.#clocks.set(key, clock);
    }
    return clock;
  }
}

/** How fast this process's monotonic clock may drift from Redis's (100 ppm). */
const DRIFT = 1e-4;

/**
 * A consumer's view of Redis's clock, from its claims' replies. Redis read its clock (`now`)
 * between the call leaving and its reply arriving, so the offset between the two clocks lies
 * between `now` − arrival (a lower bound) and `now` − departure (an upper bound). The best
 * lower bound seen (the fastest reply) is kept, worn down by the drift two clocks may have,
 * so the estimate is never ahead of Redis: nothing starts before its due time, and on a busy
 * machine one slow reply does not make every start late. An estimate above a reply's upper
 * bound is proof Redis's clock went back (a failover, a clock step): it follows at once.
 */
export class ReplyClock {
  #offset = Number.NaN;
  #at = 0;

  /** A claim's `now` (Redis ms) and the performance.now() its call left and its reply arrived. */
  observe(redisMs: number, sentAt: number, receivedAt: number): void {
    const lower = redisMs - receivedAt;
    const worn = this.#offset - (receivedAt - this.#at) * DRIFT;
    this.#offset = Number.isNaN(worn) || worn > redisMs - sentAt ? lower : Math.max(lower, worn);
    this.#at = receivedAt;
  }

  /** Redis ms now (before the first claim: this process's wall clock). */
  now(): number {
    const mono = performance.now();
    if (Number.isNaN(this.#offset)) return performance.timeOrigin + mono;
    return mono + this.#offset - (mono - this.#at) * DRIFT;
  }
}
