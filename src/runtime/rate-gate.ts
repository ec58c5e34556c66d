// How an actor keeps to the rate limits (src/queue/ratelimit/). Before each claim it takes
// tokens in one call: for the whole queue an exact count (the claim leases at most that many),
// and for each limited name with messages held back in its group, up to as many as are held.
// The claim (claim.lua, lib-held.lua) leases of each limited name only as many as it got
// tokens for and holds the rest back, in their order: they wait unleased and uncounted, as
// ready messages with their own due time, and go first when the name's tokens come. After
// the claim the tokens it did not use go back, in one call. Other names keep flowing: only
// the limited name waits. Without a rate limit the gate makes no Redis call at all.
import type { PollResult } from '../queue/message.js';
import type { RateLimits, TakeRequest } from '../queue/ratelimit/buckets.js';
import { ALL, type Rate, type RateLimitSpec } from '../queue/ratelimit/spec.js';

export interface Allowance {
  /** most messages the claim may lease (0: none now) */
  max: number;
  /** with max 0: how long to wait before asking again (ms) */
  waitMs: number;
}

/** What a claim is told of the per-name limits (Queue.poll's `limits`). */
export type ClaimLimits = { name: string; grant: number }[];

/** Longest a waiting actor sleeps before asking again: a limit changed elsewhere shows soon. */
const MAX_WAIT_MS = 5000;

export class RateGate {
  readonly #spec: RateLimitSpec | null;
  readonly #buckets: RateLimits;
  readonly #names: string[];
  /** per limited name: how many are held back in the group, as the last claim said */
  readonly #held = new Map<string, number>();
  /** per limited name: when (performance.now()) its bucket should have a token again */
  readonly #retryAt = new Map<string, number>();
  /** tokens taken for the coming claim, per limited name */
  #grants = new Map<string, number>();
  /** which held name asks first: turns go round, so no name keeps the others out */
  #turn = 0;

  constructor(spec: RateLimitSpec | null | undefined, buckets: RateLimits) {
    this.#spec = spec ?? null;
    this.#buckets = buckets;
    this.#names = Object.keys(this.#spec?.names ?? {});
  }

  get limited(): boolean {
    return this.#spec !== null;
  }

  /**
   * Tokens for a claim of up to `want` messages: the whole queue's, and those of the names
   * held back in the group. With max 0 nothing was kept: wait waitMs, then ask again.
   */
  async allow(want: number): Promise<Allowance> {
    this.#grants = new Map();
    const spec = this.#spec;
    if (!spec) return { max: want, waitMs: 0 };
    const requests: TakeRequest[] = [];
    if (spec.all) requests.push({ name: ALL, rate: spec.all, want, refund: 0 });
    // Held names, up to `want` in all: a claim leases no more (and releases no more, so its
    // cost stays that of its batch).
    const now = performance.now();
    const held = [...this.#held].filter(
      ([name, count]) => count > 0 && (this.#retryAt.get(name) ?? 0) <= now,
    );
    let room = want;
    for (let k = 0; k < held.length && room > 0; k++) {
      const [name, count] = held[(this.#turn + k) % held.length] as [string, number];
      const ask = Math.min(room, count);
      requests.push({ name, rate: this.#rate(name), want: ask, refund: 0 });
      room -= ask;
    }
    this.#turn++;
    if (requests.length === 0) return { max: want, waitMs: 0 };
    const taken = await this.#buckets.take(requests);
    let allowance: Allowance = { max: want, waitMs: 0 };
    requests.forEach((request, i) => {
      const { granted, waitMs } = taken[i] ?? { granted: request.want, waitMs: 0 };
      if (request.name === ALL) {
        allowance = { max: granted, waitMs };
        return;
      }
      this.#grants.set(request.name, granted);
      if (granted < request.want) this.#retryAt.set(request.name, now + waitMs);
      else this.#retryAt.delete(request.name);
    });
    if (allowance.max > 0) return { max: allowance.max, waitMs: 0 };
    // No claim now: the names' tokens go back at once. Many actors wait on one bucket: a
    // little jitter keeps them from asking all at once.
    await this.settle(null, 0);
    return { max: 0, waitMs: Math.min(MAX_WAIT_MS, allowance.waitMs * (1 + Math.random() / 10)) };
  }

  /** The per-name limits the coming claim keeps: each name with the tokens taken for it. */
  claimLimits(): ClaimLimits | undefined {
    if (this.#names.length === 0) return undefined;
    return this.#names.map((name) => ({ name, grant: this.#grants.get(name) ?? 0 }));
  }

  /**
   * After the claim (`polled`, null when it failed): hands back the tokens it did not use and
   * notes how many of each name are held. `allowed` is the max allow() gave. Returns how many
   * the claim held back.
   */
  async settle(polled: PollResult | null, allowed: number): Promise<number> {
    const spec = this.#spec;
    if (!spec) return 0;
    const leased = polled ? polled.messages.length + polled.malformed.length : 0;
    const refunds: TakeRequest[] = [];
    if (spec.all && allowed > leased)
      refunds.push({ name: ALL, rate: spec.all, want: 0, refund: allowed - leased });
    const used = new Map<string, number>();
    for (const message of polled?.messages ?? []) {
      const name = message.name;
      if (name !== undefined && this.#grants.has(name)) used.set(name, (used.get(name) ?? 0) + 1);
    }
    for (const [name, grant] of this.#grants) {
      const unused = grant - (used.get(name) ?? 0);
      if (unused > 0) refunds.push({ name, rate: this.#rate(name), want: 0, refund: unused });
    }
    this.#grants = new Map();
    if (polled) {
      polled.held.forEach((count, i) => {
        const name = this.#names[i];
        if (name !== undefined) this.#held.set(name, count);
      });
    }
    // Best effort: a refund lost (Redis went away) only leaves the rate a little lower.
    if (refunds.length > 0) await this.#buckets.take(refunds).catch(() => undefined);
    return polled?.heldBack ?? 0;
  }

  /**
   * How soon (ms) the actor should claim again for the messages held back in its group: 0 when
   * their tokens may be there now; null when none are held.
   */
  retryInMs(): number | null {
    let soonest: number | null = null;
    const now = performance.now();
    for (const [name, count] of this.#held) {
      if (count <= 0) continue;
      const wait = Math.max(0, (this.#retryAt.get(name) ?? 0) - now);
      soonest = soonest === null ? wait : Math.min(soonest, wait);
    }
    return soonest;
  }

  #rate(name: string): Rate {
    return (this.#spec as RateLimitSpec).names[name] as Rate;
  }
}
