// The consumer primitives behind Queue.poll/claim, ack, fail, extendLease and
// release: one script call per group each, and every call names the leases by
// the token of the claim that made them, so a consumer whose lease passed to
// another changes nothing (see message.ts and lua/lib.lua).
import { randomBytes } from 'node:crypto';
import { errors } from '../base/errors.js';
import type { ScriptName } from '../redis/scripts.js';
import type { QueueConfig } from './config.js';
import { encodeResult } from './history/result.js';
import { retentionArg } from './history/retention.js';
import {
  ackArgs,
  leaseArgs,
  type Message,
  keyOf as messageKey,
  type PollResult,
  parseClaimReply,
} from './message.js';
import { checkDuration, checkGroup, checkInteger } from './options.js';
import { DEFAULT_BACKOFF_MAX_MS } from './record.js';
import type { Unspill } from './spill.js';
import { readThrown } from './thrown.js';

/** What one `queue.poll(group, options)` leases, for how long, and what it acks on the way. */
export interface PollOptions {
  /** most messages to lease (default 100) */
  max?: number;
  /** how long the leases hold, in ms (default 30 s) */
  leaseMs?: number;
  /** messages finished since the last poll: acked in the same call */
  ack?: readonly Message[];
  /**
   * Leasing straight from the delayed set, also lease messages due within this many ms
   * (default 0); the caller must start each one at its `dueAt`.
   */
  lookaheadMs?: number;
  /**
   * Per-name rate limits (src/runtime/rate-gate.ts): for each name, how many of its messages
   * the claim may lease (the tokens taken for it); the rest wait, held back in their order.
   * Names left out are not held back, and what was held of them is leased as usual.
   */
  limits?: readonly {
    /** the job name */
    name: string;
    /** how many of its messages this claim may lease */
    grant: number;
  }[];
}

/** What `queue.fail()` did: the message will be retried, it is dead, or the lease was no longer the caller's. */
export type Outcome = 'retry' | 'dead' | 'stale';
type Args = (string | number | Buffer)[];
type Run = (name: ScriptName, group: number, args: Args) => Promise<unknown>;

/**
 * Whether some of these messages, acked in `group`, left an outcome in its outbox: a flow
 * child whose parent lives in another group (then the relay runs: flows/relay.ts). A flow
 * child that dies always runs it: its death may cascade to a parent elsewhere.
 */
function outboxTouched(group: number, messages: readonly Message[]): boolean {
  for (const message of messages) {
    if (message.parent && message.parent.group !== group) return true;
  }
  return false;
}

/** Most names one claim is told the rate limits of (a launcher limits at most 100). */
const MAX_LIMITED_NAMES = 1000;

/** claim.lua's ARGV for the limits: how many names, then each name and its grant. */
function limitArgs(limits: PollOptions['limits']): Args {
  if (limits === undefined) return ['0'];
  if (!Array.isArray(limits) || limits.length > MAX_LIMITED_NAMES)
    throw errors.invalidOption('limits', `must be an array of at most ${MAX_LIMITED_NAMES}`);
  const args: Args = [String(limits.length)];
  limits.forEach((limit, i) => {
    const name = limit?.name;
    if (typeof name !== 'string' || name === '')
      throw errors.invalidOption(`limits[${i}].name`, 'must be a non-empty string', name);
    args.push(name, String(checkInteger(`limits[${i}].grant`, limit.grant, 0, 10_000)));
  });
  return args;
}

/** Most due messages one claim promotes (or expired leases it recovers). */
const PROMOTE_LIMIT = 5000;
/** Most bytes of records one claim reads: big bodies make a smaller batch, not a long call. */
const CLAIM_BYTES = 1024 * 1024;

export class Leases {
  readonly #config: QueueConfig;
  readonly #rawHeader: string;
  readonly #run: Run;
  readonly #runBuffer: Run;
  readonly #unspill: Unspill;
  /** relays a group's flow outbox (flows/relay.ts kick) */
  readonly #relay: (group: number) => void;
  /** per group: ids of claims whose replies arrived, for the next claim to let Redis forget */
  readonly #received = new Map<number, string[]>();
  /** per group: the id of a claim whose outcome is unknown, for the next claim to use again */
  readonly #unanswered = new Map<number, string>();
  /**
   * Claim ids: random per Leases (48 bits), then a counter. Unique among the claims Redis
   * remembers, as a fresh randomBytes(9) per claim was, without a call into OpenSSL each time
   * (it showed in the actors' profile).
   */
  readonly #claimIdPrefix = randomBytes(6).toString('base64url');
  #claims = 0;

  /** `runBuffer` returns replies' strings as Buffers, so ids and bodies keep their bytes. */
  constructor(
    config: QueueConfig,
    rawHeader: string,
    run: Run,
    runBuffer: Run,
    unspill: Unspill,
    relay: (group: number) => void,
  ) {
    this.#config = config;
    this.#rawHeader = rawHeader;
    this.#run = run;
    this.#runBuffer = runBuffer;
    this.#unspill = unspill;
    this.#relay = relay;
  }

  async poll(group: number, options: PollOptions): Promise<PollResult> {
    checkGroup('group', group, this.#config.groups);
    const max = checkInteger('max', options.max ?? 100, 1, 10_000);
    const leaseMs = checkDuration('leaseMs', options.leaseMs ?? 30_000);
    const lookahead = checkDuration('lookaheadMs', options.lookaheadMs ?? 0, 60_000);
    const { unitMs } = this.#config;
    const args: Args = [
      unitMs,
      max,
      leaseMs,
      PROMOTE_LIMIT,
      this.#rawHeader,
      lookahead,
      CLAIM_BYTES,
    ];
    const acks = options.ack && options.ack.length > 0 ? this.#ofGroup(group, options.ack) : [];
    // A claim whose reply never came may have leased a batch: asking again under its id
    // answers with that batch instead of leaving it leased to nobody until the leases run out.
    const claimId =
      this.#unanswered.get(group) ?? `${this.#claimIdPrefix}${(this.#claims++).toString(36)}`;
    const received = this.#received.get(group) ?? [];
    this.#received.delete(group);
    args.push(claimId, received.join(','));
    for (const arg of limitArgs(options.limits)) args.push(arg);
    for (const arg of this.#ackArgs(acks)) args.push(arg);
    let reply: unknown[];
    try {
      reply = (await this.#runBuffer('claim', group, args)) as unknown[];
      // id, record, attempts, due for each leased message, after the stale ids and held counts
      await this.#unspill(group, reply, 9 + Number(reply[5]), 4);
    } catch (error) {
      this.#unanswered.set(group, claimId);
      this.#received.set(group, [...received, ...(this.#received.get(group) ?? [])]);
      throw error;
    }
    this.#unanswered.delete(group);
    if (outboxTouched(group, acks)) this.#relay(group);
    const result = parseClaimReply(group, reply);
    if (result.messages.length + result.malformed.length > 0) {
      this.#received.set(group, [...(this.#received.get(group) ?? []), claimId]);
    }
    // A record we cannot read must not stop the others: dead-letter it with the reason. The
    // good ones are leased already and must reach the caller even when that fails (Redis went
    // away): such a message comes back when its lease runs out, and is dead-lettered then.
    const malformed: PollResult['malformed'] = [];
    for (const bad of result.malformed) {
      const outcome = await this.fail(bad.message, bad.reason, 'dead').catch(() => null);
      if (outcome === 'dead') malformed.push(bad);
    }
    return { ...result, malformed };
  }

  async ack(messages: readonly Message[]): Promise<number> {
    let acked = 0;
    for (const [group, list] of this.#byGroup(messages)) {
      acked += ((await this.#run('ack', group, this.#ackArgs(list))) as number[])[0] as number;
      if (outboxTouched(group, list)) this.#relay(group);
    }
    return acked;
  }

  #ackArgs(messages: readonly Message[]): (string | Buffer)[] {
    const { keepDone, resultMaxBytes, events } = this.#config;
    return ackArgs(
      messages,
      retentionArg(keepDone),
      (message) => encodeResult(message.result, message.durationMs ?? 0, resultMaxBytes),
      events,
    );
  }

  /** Queue.fail: the error's text (its message, else its name) and its stack; no retry: dead. */
  failWith(message: Message, error: unknown, retry: boolean): Promise<Outcome> {
    // Anything a handler threw, read so that reading cannot throw (the actor's is read already).
    const { message: text, stack } = readThrown(error);
    return this.fail(message, text, retry ? 'retry' : 'dead', stack);
  }

  /** `mode` 'dead': dead-letter at once, with `text` as the reason; `stack`: kept beside it. */
  fail(message: Message, text: string, mode: 'retry' | 'dead', stack = ''): Promise<Outcome> {
    const group = checkGroup('message.group', message?.group, this.#config.groups);
    this.#ofGroup(group, [message]);
    const cap = this.#config.backoff.max ?? DEFAULT_BACKOFF_MAX_MS;
    const reason = mode === 'dead' ? text : '';
    const events = this.#config.events ? '1' : '';
    const args = [
      this.#config.unitMs,
      message.token,
      messageKey(message),
      text,
      mode,
      reason,
      cap,
      events,
      retentionArg(this.#config.keepDead),
      stack,
    ];
    const outcome = this.#run('fail', group, args) as Promise<Outcome>;
    if (!message.parent) return outcome;
    return outcome.then((done) => {
      if (done === 'dead') this.#relay(group); // its parent learns of it (flows/relay.ts)
      return done;
    });
  }

  async extend(messages: readonly Message[], leaseMs: number): Promise<number> {
    const ms = checkDuration('leaseMs', leaseMs);
    let renewed = 0;
    for (const [group, list] of this.#byGroup(messages)) {
      const reply = (await this.#run('extend', group, [ms, ...leaseArgs(list)])) as number[];
      renewed += reply[0] as number;
    }
    return renewed;
  }

  async release(messages: readonly Message[], attempted: boolean): Promise<number> {
    let released = 0;
    for (const [group, list] of this.#byGroup(messages)) {
      const args = [this.#config.unitMs, attempted ? '1' : '', '', ...leaseArgs(list)];
      released += (await this.#run('release', group, args)) as number;
    }
    return released;
  }

  /** Claimed messages, checked to belong to `group`. */
  #ofGroup(group: number, messages: readonly Message[]): readonly Message[] {
    for (const message of messages) {
      if (typeof message?.token !== 'string' || message.group !== group) {
        throw errors.invalidOption('messages', `must be messages claimed from group ${group}`);
      }
    }
    return messages;
  }

  #byGroup(messages: readonly Message[]): Map<number, Message[]> {
    if (!Array.isArray(messages)) throw errors.invalidOption('messages', 'must be an array');
    const out = new Map<number, Message[]>();
    for (const message of messages) {
      checkGroup('messages[].group', message?.group, this.#config.groups);
      this.#ofGroup(message.group, [message]);
      const list = out.get(message.group);
      if (list) list.push(message);
      else out.set(message.group, [message]);
    }
    return out;
  }
}
