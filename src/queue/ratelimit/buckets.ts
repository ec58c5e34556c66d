// The rate-limit buckets in Redis (lua/ratelimit-*.lua), and handing held-back messages
// back to wait. All buckets of a prefix share one hash slot, `{<prefix>:rate}`, apart from
// every group's: a claim cannot take tokens in its own script call on a cluster, so a
// consumer takes them in a call of their own before the claim (the whole queue's, an exact
// count, then claims at most that many) and after it (the names it leased, handing back
// what it did not use). See the README's "Rate limits".
import type { MultiGroupScriptName, ScriptName } from '../../redis/scripts.js';
import { leaseArgs, type Message } from '../message.js';
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
  /** the bucket is empty, or a take got less than it asked lately: work is held back */
  limited: boolean;
}

/** Most buckets a listing returns (names are bounded by the runtime's 100 anyway). */
const LIST_LIMIT = 200;

type RunKeys = (
  name: MultiGroupScriptName,
  keys: string[],
  args: (string | number)[],
) => Promise<unknown>;
type Run = (
  name: ScriptName,
  group: number,
  args: (string | number | Buffer)[],
) => Promise<unknown>;

/** The shared rate-limit buckets of a queue (`queue.rateLimits`): what limits are live, and how full. */
export class RateLimits {
  readonly #keys: ReturnType<typeof rateKeys>;
  readonly #unitMs: number;
  readonly #runKeys: RunKeys;
  readonly #run: Run;

  /** @internal made by the Queue */
  constructor(prefix: string, unitMs: number, runKeys: RunKeys, run: Run) {
    this.#keys = rateKeys(prefix);
    this.#unitMs = unitMs;
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
    const reply = (await this.#runKeys('ratelimit-list', [this.#keys.index], args)) as (
      | string
      | number
    )[];
    const out: BucketState[] = [];
    for (let i = 0; i + 5 < reply.length; i += 6) {
      const perMs = Number(reply[i + 2]);
      const since = Number(reply[i + 5]);
      const milliTokens = Number(reply[i + 4]);
      out.push({
        name: String(reply[i]),
        max: Number(reply[i + 1]),
        perMs,
        cap: Number(reply[i + 3]),
        tokens: milliTokens / 1000,
        // Held back lately, or drained now: held-back messages come back one by one as tokens
        // arrive, so a steady backlog may see every take granted with the bucket kept empty.
        limited: (since >= 0 && since <= Math.max(2 * perMs, 2000)) || milliTokens < 1000,
      });
    }
    // The whole queue's first, then by name.
    return out.sort((a, b) =>
      a.name === ALL ? -1 : b.name === ALL ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  }

  /**
   * @internal
   * Hands leased messages of one group back to wait `holdMs[i]` more (ms), without counting
   * an attempt; returns how many were still the caller's.
   */
  async holdBack(
    group: number,
    messages: readonly Message[],
    holdMs: readonly number[],
  ): Promise<number> {
    if (messages.length === 0) return 0;
    // leaseArgs orders the messages by token: the hold times follow that order.
    const byToken = new Map<string, number[]>();
    messages.forEach((m, i) => {
      const list = byToken.get(m.token);
      if (list) list.push(i);
      else byToken.set(m.token, [i]);
    });
    const ordered = [...byToken.values()].flat();
    const args: (string | number | Buffer)[] = [this.#unitMs, ordered.length];
    for (const i of ordered) args.push(Math.max(0, Math.ceil(holdMs[i] ?? 0)));
    args.push(...leaseArgs(ordered.map((i) => messages[i] as Message)));
    return (await this.#run('ratelimit-holdback', group, args)) as number;
  }
}
