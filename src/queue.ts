// The Queue: add, cancel, reschedule and inspect messages, plus the consumer
// primitives (claim, ack, fail, extendLease) the actor runtime is built on.
// Each state change is one Lua script call on one group's hash slot.
import {
  type AddOptions,
  dueArgument,
  type PreparedMessage,
  prepareMessage,
} from './add-options.js';
import { RedisClock } from './clock.js';
import { type QueueConfig, type QueueOptions, queueConfig } from './config.js';
import { DeadLetters } from './dead-letters.js';
import { errors } from './errors.js';
import { IdBlocks } from './id-blocks.js';
import { groupKeys, homeGroup, keyOf } from './keys.js';
import { type Message, type PollResult, parseClaimReply } from './message.js';
import { type MessageInfo, messageInfo } from './message-info.js';
import {
  checkDuration,
  checkGroup,
  checkId,
  checkInteger,
  checkObject,
  rejectUnknown,
} from './options.js';
import { type Body, headerOf } from './record.js';
import { connect, type RedisClient } from './redis/connection.js';
import { explainRedisError } from './redis/explain.js';
import { type ScriptName, Scripts } from './redis/scripts.js';

export interface GroupCounts {
  group: number;
  delayed: number;
  ready: number;
  active: number;
  dead: number;
}

export interface PollOptions {
  max?: number;
  leaseMs?: number;
  /** ids finished since the last poll: acked in the same call */
  ack?: string[];
  /**
   * When nothing is ready, also lease messages due within this many ms (default 0);
   * the caller must start each one at its `dueAt`.
   */
  lookaheadMs?: number;
}

/** Messages per add.lua call: big enough to amortise, small enough to keep Redis responsive. */
const ADD_CHUNK = 1000;
/** Most due messages one claim promotes (or expired leases it recovers). */
const PROMOTE_LIMIT = 5000;

export class Queue {
  readonly config: QueueConfig;
  readonly client: RedisClient;
  readonly deadLetters: DeadLetters;
  readonly #scripts: Scripts;
  readonly #ownsClient: boolean;
  readonly #keys: string[][];
  readonly #rawHeader: string;
  /** Redis's clock as seen from here (due times are on it). */
  readonly clock: RedisClock;
  readonly #idBlocks: IdBlocks;
  #roundRobin = 0;
  #closed = false;

  constructor(options: QueueOptions = {}) {
    this.config = queueConfig(options);
    this.#ownsClient = options.connection === undefined;
    this.client = options.connection ?? connect(options, { name: 'skyq' });
    this.#scripts = new Scripts(this.client);
    this.#keys = Array.from({ length: this.config.groups }, (_, g) =>
      groupKeys(this.config.prefix, g),
    );
    this.clock = new RedisClock(this.client);
    this.#idBlocks = new IdBlocks(
      this.client,
      this.#keys.map((_, g) => keyOf(this.config.prefix, g, 'seq')),
    );
    const defaults = { enqueuedAt: null, priority: 0, maxAttempts: this.config.attempts };
    this.#rawHeader = `${headerOf({ ...defaults, backoff: this.config.backoff })}s`;
    this.deadLetters = new DeadLetters(this.config, (name, group, args) =>
      this.run(name, group, args),
    );
  }

  /** Resolves once connected with every script loaded on every server. */
  async ready(): Promise<void> {
    await Promise.all([this.#scripts.preload(), this.clock.measure()]);
  }

  async add(body: Body, options?: AddOptions): Promise<string> {
    const [id] = await this.addBulk([{ body, options }]);
    return id as string;
  }

  /** Adds many messages in one add.lua call per group and chunk of 1,000. */
  async addBulk(items: { body: Body; options?: AddOptions | undefined }[]): Promise<string[]> {
    if (!Array.isArray(items)) throw errors.invalidOption('items', 'must be an array', items);
    const many = items.length > 1;
    const prepared = items.map((item, i) => {
      const field = many ? `items[${i}]` : '';
      if (typeof item !== 'object' || item === null)
        throw errors.invalidOption(field || 'item', 'must be { body, options }');
      return prepareMessage(this.config, item.body, item.options, () => this.#nextGroup(), field);
    });
    const byGroup = new Map<number, number[]>();
    prepared.forEach((message, index) => {
      const list = byGroup.get(message.group) ?? [];
      list.push(index);
      byGroup.set(message.group, list);
    });
    const ids = new Array<string>(items.length);
    const calls: Promise<void>[] = [];
    for (const [group, indexes] of byGroup) {
      for (let start = 0; start < indexes.length; start += ADD_CHUNK) {
        const chunk = indexes.slice(start, start + ADD_CHUNK);
        calls.push(this.#addChunk(group, chunk, prepared, ids));
      }
    }
    await Promise.all(calls);
    return ids;
  }

  async #addChunk(group: number, chunk: number[], prepared: PreparedMessage[], ids: string[]) {
    const messages = chunk.map((index) => prepared[index] as PreparedMessage);
    const generated = await this.#idBlocks.take(group, messages.filter((m) => !m.callerId).length);
    const now = await this.clock.now();
    const unit = this.config.unitMs;
    const args: string[] = ['0', ''];
    let earliest = Number.POSITIVE_INFINITY;
    let nextGenerated = 0;
    messages.forEach((message, i) => {
      const id = message.callerId || (generated[nextGenerated++] as string);
      ids[chunk[i] as number] = id;
      if (message.callerId) args[0] = '1';
      const dueMs = 'runAt' in message.due ? message.due.runAt : now + message.due.delay;
      // Due now goes straight to the ready set; later, to the delayed set.
      const score = dueMs <= now ? '' : String(unit === 1 ? dueMs : dueMs / unit);
      if (score && dueMs < earliest) earliest = dueMs;
      args.push(id, score, String(message.priority), message.record);
    });
    if (earliest !== Number.POSITIVE_INFINITY)
      args[1] = String(unit === 1 ? earliest : earliest / unit);
    await this.run('add', group, args);
  }

  /** Removes a delayed or ready message; false when unknown, running or dead. */
  async cancel(id: string, options?: { group?: number }): Promise<boolean> {
    return this.#onFirstGroup(id, options, (group) =>
      this.run('cancel', group, [id]).then(Boolean),
    );
  }

  /** Gives a delayed or ready message a new due time; false when unknown, running or dead. */
  async reschedule(
    id: string,
    options: { delay?: number; runAt?: number | Date; group?: number },
  ): Promise<boolean> {
    const { delay, runAt, group, ...rest } = checkObject('options', options);
    rejectUnknown('', rest);
    if (delay === undefined && runAt === undefined)
      throw errors.invalidOption('delay', 'give delay or runAt');
    const when = dueArgument(delay, runAt);
    return this.#onFirstGroup(id, { group }, (g) =>
      this.run('reschedule', g, [String(this.config.unitMs), id, when]).then(Boolean),
    );
  }

  async get(id: string, options?: { group?: number }): Promise<MessageInfo | null> {
    let found: MessageInfo | null = null;
    await this.#onFirstGroup(id, options, async (group) => {
      const reply = (await this.run('inspect', group, [String(this.config.unitMs), id])) as (
        | string
        | false
      )[];
      if (!reply[0]) return false;
      found = messageInfo(id, group, reply, this.#rawHeader);
      return true;
    });
    return found;
  }

  async counts(): Promise<GroupCounts[]> {
    return Promise.all(
      this.#keys.map(async (_, group) => {
        const [delayed, ready, active, dead] = (await this.run('counts', group, [])) as number[];
        return { group, delayed, ready, active, dead } as GroupCounts;
      }),
    );
  }

  /** Promotes what is due and leases up to `max` ready messages, by priority then age. */
  async claim(group: number, max = 100, leaseMs = 30_000): Promise<Message[]> {
    return (await this.poll(group, { max, leaseMs })).messages;
  }

  /** claim() with everything the runtime needs: next due time, and acks in the same call. */
  async poll(group: number, options: PollOptions = {}): Promise<PollResult> {
    checkGroup('group', group, this.config.groups);
    const max = checkInteger('max', options.max ?? 100, 1, 10_000);
    const leaseMs = checkDuration('leaseMs', options.leaseMs ?? 30_000);
    const ack = (options.ack ?? []).map((id) => checkId('ack', id));
    const lookahead = checkDuration('lookaheadMs', options.lookaheadMs ?? 0, 60_000);
    const args = [
      String(this.config.unitMs),
      max,
      leaseMs,
      PROMOTE_LIMIT,
      this.#rawHeader,
      lookahead,
      ...ack,
    ];
    const result = parseClaimReply(group, await this.run('claim', group, args));
    // A record we cannot read must not stop the others: dead-letter it with the reason.
    for (const bad of result.malformed) {
      await this.run('fail', group, [
        String(this.config.unitMs),
        bad.id,
        bad.reason,
        'dead',
        bad.reason,
      ]);
    }
    return result;
  }

  async ack(group: number, ids: string[]): Promise<number> {
    checkGroup('group', group, this.config.groups);
    if (ids.length === 0) return 0;
    return (await this.run(
      'ack',
      group,
      ids.map((id) => checkId('ids', id)),
    )) as number;
  }

  /** Retries with the message's backoff, or dead-letters it after its last attempt. */
  async fail(group: number, id: string, error: unknown): Promise<'retry' | 'dead' | 'gone'> {
    checkGroup('group', group, this.config.groups);
    const text = error instanceof Error ? error.message || error.name : String(error);
    return (await this.run('fail', group, [
      String(this.config.unitMs),
      checkId('id', id),
      text,
      'retry',
      '',
    ])) as 'retry' | 'dead' | 'gone';
  }

  async extendLease(group: number, ids: string[], leaseMs: number): Promise<number> {
    checkGroup('group', group, this.config.groups);
    if (ids.length === 0) return 0;
    return (await this.run('extend', group, [checkDuration('leaseMs', leaseMs), ...ids])) as number;
  }

  /** Hands leases back without counting an attempt (a consumer shutting down). */
  async release(group: number, ids: string[]): Promise<number> {
    checkGroup('group', group, this.config.groups);
    if (ids.length === 0) return 0;
    return (await this.run('release', group, [String(this.config.unitMs), ...ids])) as number;
  }

  /** Runs one script against one group's keys. */
  run(name: ScriptName, group: number, args: (string | number)[]): Promise<unknown> {
    if (this.#closed) return Promise.reject(errors.closed('queue'));
    return this.#scripts.run(name, this.#keys[group] as string[], args).catch((error) => {
      throw explainRedisError(error, this.config.prefix, this.client);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsClient) await this.client.quit().catch(() => this.client.disconnect());
  }

  #nextGroup(): number {
    const group = this.#roundRobin;
    this.#roundRobin = (group + 1) % this.config.groups;
    return group;
  }

  /** Tries the id's home group first, then every other group at once. */
  async #onFirstGroup(
    id: string,
    options: { group?: unknown } | undefined,
    attempt: (group: number) => Promise<boolean>,
  ): Promise<boolean> {
    checkId('id', id);
    const named = options?.group;
    if (named !== undefined) return attempt(checkGroup('group', named, this.config.groups));
    const home = homeGroup(id, this.config.groups);
    if (await attempt(home)) return true;
    const others = this.#keys.map((_, g) => g).filter((g) => g !== home);
    return (await Promise.all(others.map(attempt))).some(Boolean);
  }
}
