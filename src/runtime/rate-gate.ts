// How an actor keeps to the rate limits (src/queue/ratelimit/): before a claim it takes
// tokens for the whole queue, an exact count, and claims at most that many; after the
// claim it takes tokens for the limited names it leased and hands the rest back to wait,
// uncounted, each until its name's bucket should have a token for it. Other names keep
// flowing: only the limited name waits. Unused whole-queue tokens go back in the same call.
// Without a rate limit the gate makes no Redis call at all.
import type { Message } from '../queue/message.js';
import type { RateLimits, TakeRequest } from '../queue/ratelimit/buckets.js';
import { ALL, type RateLimitSpec } from '../queue/ratelimit/spec.js';

export interface Allowance {
  /** most messages the claim may lease (0: none now) */
  max: number;
  /** with max 0: how long to wait before asking again (ms) */
  waitMs: number;
}

export interface Admitted {
  run: Message[];
  heldBack: number;
}

/** Longest a waiting actor sleeps before asking again: a limit changed elsewhere shows soon. */
const MAX_WAIT_MS = 5000;

export class RateGate {
  readonly #spec: RateLimitSpec | null;
  readonly #buckets: RateLimits;
  readonly #group: number;

  constructor(spec: RateLimitSpec | null | undefined, buckets: RateLimits, group: number) {
    this.#spec = spec ?? null;
    this.#buckets = buckets;
    this.#group = group;
  }

  get limited(): boolean {
    return this.#spec !== null;
  }

  /** Tokens for up to `want` messages from the whole queue's bucket. */
  async allow(want: number): Promise<Allowance> {
    const all = this.#spec?.all;
    if (!all) return { max: want, waitMs: 0 };
    const [taken] = await this.#buckets.take([{ name: ALL, rate: all, want, refund: 0 }]);
    if (!taken || taken.granted > 0) return { max: taken?.granted ?? want, waitMs: 0 };
    // Many actors wait on one bucket: a little jitter keeps them from asking all at once.
    const waitMs = Math.min(MAX_WAIT_MS, taken.waitMs * (1 + Math.random() / 10));
    return { max: 0, waitMs };
  }

  /**
   * What a claim leased, within the limits: the messages to run now. The rest (limited names
   * out of tokens) are handed back to wait. `allowed` is what allow() granted for the claim.
   */
  async admit(messages: Message[], allowed: number): Promise<Admitted> {
    const spec = this.#spec;
    if (!spec) return { run: messages, heldBack: 0 };
    const byName = new Map<string, Message[]>();
    for (const message of messages) {
      const name = message.name;
      if (name === undefined || !spec.names[name]) continue;
      const list = byName.get(name);
      if (list) list.push(message);
      else byName.set(name, [message]);
    }
    const unused = spec.all ? Math.max(0, allowed - messages.length) : 0;
    if (byName.size === 0) {
      if (unused > 0) await this.#refund(unused);
      return { run: messages, heldBack: 0 };
    }
    const names = [...byName.keys()];
    const requests: TakeRequest[] = names.map((name) => ({
      name,
      rate: spec.names[name] as NonNullable<(typeof spec.names)[string]>,
      want: (byName.get(name) as Message[]).length,
      refund: 0,
    }));
    const taken = await this.#buckets.take(requests);
    const hold = new Set<Message>();
    const holdMs: number[] = [];
    const held: Message[] = [];
    names.forEach((name, i) => {
      const list = byName.get(name) as Message[];
      const result = taken[i];
      const rate = spec.names[name] as { max: number; perMs: number };
      const granted = result?.granted ?? list.length;
      // The k-th held back waits for the k-th token after the next: they come back one by
      // one as tokens arrive, not all at once for most of them to be held back again.
      for (let k = granted; k < list.length; k++) {
        const message = list[k] as Message;
        hold.add(message);
        held.push(message);
        holdMs.push((result?.waitMs ?? 0) + ((k - granted) * rate.perMs) / rate.max);
      }
    });
    // Held-back messages took whole-queue tokens they did not use: those go back too.
    if (held.length > 0) await this.#buckets.holdBack(this.#group, held, holdMs);
    const refund = unused + (spec.all ? held.length : 0);
    if (refund > 0) await this.#refund(refund);
    return { run: messages.filter((m) => !hold.has(m)), heldBack: held.length };
  }

  /** Best effort: a refund lost (Redis went away) only leaves the rate a little lower. */
  async #refund(count: number): Promise<void> {
    const all = this.#spec?.all;
    if (!all) return;
    await this.#buckets
      .take([{ name: ALL, rate: all, want: 0, refund: count }])
      .catch(() => undefined);
  }
}
