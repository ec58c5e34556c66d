// The rate-limit buckets in Redis (lua/ratelimit-*.lua). All buckets of a prefix share one
// hash slot, `{<prefix>:rate}`, apart from every group's: a claim cannot take tokens in its
// own script call on a cluster, so a consumer takes them in a call of their own before the
// claim (the whole queue's, an exact count, and those of the names held back) and hands
// back what the claim did not use after it (src/runtime/rate-gate.ts). See the README's
// "Rate limits".
import type { MultiGroupScriptName, ScriptName } from '../../redis/scripts.js';
import { ALL, capOf, type Rate } from './spec.js';

export const rateKeys = (prefix: string) => ({
  index: `{${prefix}:rate}:index`,
  bucket: (name: string) => `{${prefix}:rate}:b:${name}`,
});

export interface TakeRequest {
  name: string;
  rate: Rate;
  want: number;
  /** tokens taken before and not used: back into the bucket first */
  refund: number;
}

export interface TakeResult {
  granted: number;
  /** ms until the tokens still wanted (up to the bucket's cap) should be there; 0 = granted all */
  waitMs: number;
  tokens: number;
}

/** A live bucket, as stats and /metrics show it. */
export interface BucketState {
  /** the job name, or '*' for the whole queue */
  name: string;
  /** at most this many starts … */
  max: number;
  /** … per this many ms */
  perMs: number;
  /** the most tokens it saves up (a tenth of max, at least 1) */
  cap: number;
  /** the tokens in it now */
  tokens: number;
  /** a job name's messages held back now, over every group (0 for the whole queue's) */
  held: number;
  /**
   * work is held back for this bucket now: some of the name's messages are held, or (the whole
   * queue's) an actor waits for a token and the bucket is not full
   */
  limited: boolean;
}

/** Most buckets a listing returns (names are bounded by the runtime's 100 anyway). */
const LIST_LIMIT = 200;
/**
 * A whole-queue wait that ended this recently still counts: a waiting actor asks again a
 * little after its wait (jitter, a round trip), and a steady backlog should not blink to "no".
 */
const HOLD_SLACK_MS = 250;

type RunKeys = (
  name: MultiGroupScriptName,
  keys: string[],
  args: (string | number)[],
) => Promise<unknown>;
type Run = (name: ScriptName, group: number, args: string[]) => Promise<unknown>;

/** The shared rate-limit buckets of a queue (`queue.rateLimits`): what limits are live, and how full. */
export class RateLimits {
  readonly #keys: ReturnType<typeof rateKeys>;
  readonly #groups: number;
  readonly #runKeys: RunKeys;
  readonly #run: Run;

  /** @internal made by the Queue */
  constructor(prefix: string, groups: number, runKeys: RunKeys, run: Run) {
    this.#keys = rateKeys(prefix);
    this.#groups = groups;
    this.#runKeys = runKeys;
    this.#run = run;
  }

  /** @internal Takes (and hands back) tokens of several buckets in one call on Redis's clock. */
  async take(requests: readonly TakeRequest[]): Promise<TakeResult[]> {
    if (requests.length === 0) return [];
    const keys = [this.#keys.index, ...requests.map((r) => this.#keys.bucket(r.name))];
    const args: (string | number)[] = [];
    for (const r of requests) {
      args.push(r.name, r.rate.max, r.rate.perMs, capOf(r.rate), r.want, r.refund);
    }
    const reply = (await this.#runKeys('ratelimit-take', keys, args)) as number[];
    return requests.map((_, i) => ({
      granted: Number(reply[i * 3]),
      waitMs: Number(reply[i * 3 + 1]),
      tokens: Number(reply[i * 3 + 2]) / 1000,
    }));
  }

  /** The buckets some launcher used lately (they expire a minute after their last take). */
  async list(): Promise<BucketState[]> {
    const args = [this.#keys.bucket(''), LIST_LIMIT];
    const [reply, held] = await Promise.all([
      this.#runKeys('ratelimit-list', [this.#keys.index], args) as Promise<(string | number)[]>,
      this.held(),
    ]);
    const out: BucketState[] = [];
    for (let i = 0; i + 5 < reply.length; i += 6) {
      const since = Number(reply[i + 5]);
      const cap = Number(reply[i + 3]);
      const tokens = Number(reply[i + 4]) / 1000;
      const name = String(reply[i]);
      const heldNow = name === ALL ? 0 : (held.get(name) ?? 0);
      out.push({
        name,
        max: Number(reply[i + 1]),
        perMs: Number(reply[i + 2]),
        cap,
        tokens,
        held: heldNow,
        // A full bucket holds nothing back: its refills go unused.
        limited: name === ALL ? since >= 0 && since <= HOLD_SLACK_MS && tokens < cap : heldNow > 0,
      });
    }
    // The whole queue's first, then by name.
    return out.sort((a, b) =>
      a.name === ALL ? -1 : b.name === ALL ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  }

  /**
   * How many messages of each name the per-name limits hold back now, over every group (one
   * read-only call a group; a group that cannot be read counts none).
   */
  async held(): Promise<Map<string, number>> {
    const replies = await Promise.allSettled(
      Array.from({ length: this.#groups }, (_, g) => this.#run('ratelimit-held', g, [])),
    );
    const out = new Map<string, number>();
    for (const reply of replies) {
      if (reply.status !== 'fulfilled') continue;
      const flat = reply.value as (string | number)[];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const name = String(flat[i]);
        out.set(name, (out.get(name) ?? 0) + Number(flat[i + 1]));
      }
    }
    return out;
  }
}
