// The Queue: add, cancel, reschedule and inspect messages, plus the consumer
// primitives (claim, ack, fail, extendLease, release) the actor runtime is
// built on. Each state change is one Lua script call on one group's hash slot.

import { errors } from '../base/errors.js';
import { connect, isCluster, type RedisClient } from '../redis/connection.js';
import type { MultiGroupScriptName, ScriptName } from '../redis/scripts.js';
import {
  type AddContext,
  addContextOf,
  addPrepared,
  singleAddError,
  spreadOverGroups,
} from './add-bulk.js';
import {
  type AddOptions,
  dueArgument,
  prepareContext,
  prepareMessage,
  type RescheduleOptions,
} from './add-options.js';
import {
  Browser,
  type ListOptions,
  type ListPage,
  type ListState,
  type StateCounts,
} from './browse/list.js';
import { RedisClock } from './clock.js';
import { type QueueConfig, type QueueOptions, queueConfig } from './config.js';
import { type GroupCounts, groupCounts } from './counts.js';
import { DeadLetters, type ReadSpillStart } from './dead-letters.js';
import { stackOf } from './error-stack.js';
import type { QueueEvent } from './events/event.js';
import { type EventsOptions, readEvents } from './events/reader.js';
import { onFirstGroup } from './first-group.js';
import { cancelIn } from './flows/cancel.js';
import { Flows } from './flows/flows.js';
import { childCounts } from './flows/read.js';
import { ensureFormat } from './format.js';
import { type Args, GroupScripts } from './group-scripts.js';
import { endingOf, type WaitForOptions, type WaitResult, waitForJob } from './history/wait-for.js';
import { Waiters } from './history/waiters.js';
import { Leases, type Outcome, type PollOptions } from './leases.js';
import type { Message, PollResult } from './message.js';
import { type MessageInfo, messageInfo } from './message-info.js';
import { checkGroup, checkObject, rejectUnknown } from './options.js';
import { RateLimits } from './ratelimit/buckets.js';
import { type Body, headerOf } from './record.js';
import {
  checkLogLine,
  type PendingReport,
  progressText,
  type ReportOutcome,
  reportArgs,
  reportOne,
  reportOutcome,
} from './reports.js';
import { Schedules } from './schedules/schedules.js';
import { type Unspill, unspill, unspillStart } from './spill.js';

export type { GroupCounts } from './counts.js';
export type { PollOptions } from './leases.js';

/**
 * A queue on Redis: add, cancel, reschedule and inspect messages, plus the consumer primitives
 * (claim, ack, fail, extendLease, release) the actor runtime is built on.
 *
 * `B` is what this queue's bodies are (`new Queue<{ orderId: string }>()`), for add() and what
 * get() and claim() hand back. It is a promise the caller makes, not a check: bodies are stored
 * as JSON, text or bytes whatever the type says, and a raw member other programs add is its
 * text.
 */
export class Queue<B = Body> {
  /** its settings, checked, defaults filled in */
  readonly config: QueueConfig;
  /** the ioredis client it uses (yours, when given as `connection`) */
  readonly client: RedisClient;
  /** its dead letters: page, retry, purge */
  readonly deadLetters: DeadLetters;
  /** periodic schedules whose occurrences are messages of this queue */
  readonly schedules: Schedules;
  /** the shared rate-limit buckets (the runtime's rateLimit option takes from them) */
  readonly rateLimits: RateLimits;
  /** flows: trees of jobs where a parent runs once its children have ended */
  readonly flows: Flows<B>;
  readonly #scripts: GroupScripts;
  readonly #browser: Browser;
  readonly #ownsClient: boolean;
  readonly #rawHeader: string;
  /** Redis's clock as seen from here: one per server (on a cluster, per group's master). */
  readonly #clocks = new Map<number, RedisClock>();
  readonly #adder: AddContext;
  readonly #leases: Leases;
  readonly #unspill: Unspill = (group, records, at, step) =>
    unspill(this.client, this.config.prefix, group, records, at, step);
  readonly #readStart: ReadSpillStart = (group, records, at, step, bytes) =>
    unspillStart(this.client, this.config.prefix, group, records, at, step, bytes);
  #roundRobin: number;
  #waiters: Waiters | undefined;
  /** ends every events() reader when the queue closes */
  readonly #closing = new AbortController();

  constructor(options: QueueOptions = {}) {
    this.config = queueConfig(options);
    this.#ownsClient = options.connection === undefined;
    this.client =
      options.connection ?? connect(options, { name: options.connectionName ?? 'skyq' });
    this.#scripts = new GroupScripts(this.client, this.config);
    // Each (re)connect writes the format back where a server lost it (every script would
    // anyway, in its own slot; this covers the prefix's key too). A newer one: the scripts refuse.
    this.client.on('ready', () => void this.#ensureFormat().catch(() => undefined));
    const defaults = { enqueuedAt: null, priority: 0, maxAttempts: this.config.attempts };
    this.#rawHeader = headerOf({ ...defaults, backoff: this.config.backoff });
    this.deadLetters = new DeadLetters(
      this.config,
      (name, group, args) => this.#runBuffer(name, group, args),
      this.#unspill,
      this.#readStart,
    );
    this.#browser = new Browser(
      this.config,
      (name, group, args) => this.#runBuffer(name, group, args) as Promise<(Buffer | null)[]>,
      this.#readStart,
    );
    this.schedules = new Schedules({
      config: this.config,
      run: (name, group, args, buffers) => this.run(name, group, args, buffers),
      now: (group) => this.clock(group).now(),
    });
    this.rateLimits = new RateLimits(
      this.config.prefix,
      this.config.groups,
      (name, keys, args) => this.#scripts.runKeys(name, keys, args),
      (name, group, args) => this.run(name, group, args),
    );
    this.#leases = new Leases(
      this.config,
      this.#rawHeader,
      (name, group, args) => this.run(name, group, args),
      (name, group, args) => this.#runBuffer(name, group, args),
      this.#unspill,
      (group) => this.flows.relay.kick(group),
    );
    // Each producer starts somewhere else, so many short-lived ones do not all fill group 0.
    this.#roundRobin = Math.floor(Math.random() * this.config.groups);
    this.#adder = addContextOf(this.client, this.config, {
      now: (group, at) => this.clock(group).now(at),
      run: (name, group, args) => this.run(name, group, args),
      explain: (error) => this.#scripts.explain(error),
    });
    this.flows = new Flows<B>({
      adder: {
        ...this.#adder,
        run: (group, args) => this.run('flow-add', group, args),
        pickGroup: () => {
          const group = this.#roundRobin;
          this.#roundRobin = (group + 1) % this.config.groups;
          return group;
        },
      },
      read: (name, group, args) => this.#runBuffer(name, group, args),
      relay: (name, group, args) => this.#runBuffer(name, group, args),
      unitMs: this.config.unitMs,
      groups: this.config.groups,
      find: async (id, group) => {
        const info = await this.get(id, group === undefined ? undefined : { group });
        return info && { id: info.id, group: info.group, name: info.name, state: info.state };
      },
    });
  }

  /**
   * Resolves once connected with every script loaded on every server, and the data format
   * checked (rejects when a newer skyq wrote it: see format.ts).
   */
  async ready(): Promise<void> {
    await Promise.all([this.#scripts.preload(), this.clock(0).measure()]).catch((error) => {
      throw this.#scripts.explain(error);
    });
    await this.#ensureFormat();
  }

  /** The format checked and raised in every slot (format.ts); again after each reconnect. */
  #ensureFormat(): Promise<number> {
    return ensureFormat(
      (key, version) => this.runMulti('format', key, [version]),
      this.config.prefix,
      this.config.groups,
    );
  }

  /** Redis's clock for a group's server (the same one for every group on a standalone server). */
  clock(group: number): RedisClock {
    const key = isCluster(this.client) ? group : 0;
    let clock = this.#clocks.get(key);
    if (!clock) {
      const read = isCluster(this.client)
        ? () => this.run('time', group, []) as Promise<[string, string]>
        : () => this.client.time() as Promise<[number, number]>;
      clock = new RedisClock(read);
      this.#clocks.set(key, clock);
    }
    return clock;
  }

  /** Adds one message; a refusal rejects with its own error (ERR_SKYQ_AUTH, ERR_SKYQ_REDIS, …). */
  async add(body: B, options?: AddOptions): Promise<string> {
    try {
      const [id] = await this.addBulk([{ body, options }]);
      return id as string;
    } catch (error) {
      throw singleAddError(error);
    }
  }

  /**
   * Adds many messages in one add.lua call per group and chunk. When some calls fail, rejects
   * with an AddBulkError saying which items went in (their ids) and which did not.
   */
  async addBulk(items: { body: B; options?: AddOptions | undefined }[]): Promise<string[]> {
    if (!Array.isArray(items)) throw errors.invalidOption('items', 'must be an array', items);
    const many = items.length > 1;
    const context = prepareContext();
    const prepared = items.map((item, i) => {
      const field = many ? `items[${i}]` : '';
      if (typeof item !== 'object' || item === null)
        throw errors.invalidOption(field || 'item', 'must be { body, options }');
      return prepareMessage(this.config, item.body, item.options, field, context);
    });
    if (this.#scripts.closed) throw errors.closed('queue');
    this.#roundRobin = spreadOverGroups(prepared, this.config.groups, this.#roundRobin);
    return addPrepared(this.#adder, prepared);
  }

  /**
   * Removes a delayed or ready message, or a waiting flow parent with its pending children;
   * false when unknown, running or dead. A flow child whose parent waits for it is refused
   * (ERR_SKYQ_FLOW) unless it was added as optional.
   */
  async cancel(id: string | Buffer, options?: { group?: number }): Promise<boolean> {
    const events = this.config.events ? '1' : '';
    const run = (group: number, key: string | Buffer, mode: string) =>
      this.run('cancel', group, mode === '' ? [key, events] : [key, events, mode]);
    return onFirstGroup(this.config.groups, id, options, (group, key) =>
      cancelIn(run, this.flows as Flows<unknown>, group, key),
    );
  }

  /** Gives a delayed or ready message a new due time; false when unknown, running or dead. */
  async reschedule(id: string | Buffer, options: RescheduleOptions): Promise<boolean> {
    const { delay, runAt, group, ...rest } = checkObject('options', options);
    rejectUnknown('', rest);
    if (delay === undefined && runAt === undefined)
      throw errors.invalidOption('delay', 'give delay or runAt');
    const when = dueArgument(delay, runAt);
    return onFirstGroup(this.config.groups, id, { group }, (g, key) =>
      this.run('reschedule', g, [
        this.config.unitMs,
        key,
        when,
        this.config.events ? '1' : '',
      ]).then(Boolean),
    );
  }

  /**
   * Where one message is and how it went: state, due time, attempts, errors, body; for a kept done
   * job its result. Null for an id it does not know (never added, cancelled, purged, or done and no
   * longer kept).
   */
  async get(id: string | Buffer, options?: { group?: number }): Promise<MessageInfo<B> | null> {
    let found: MessageInfo | null = null;
    await onFirstGroup(this.config.groups, id, options, async (group, key) => {
      const ageMs = this.config.keepDone?.ageMs ?? 0;
      const args = [this.config.unitMs, key, ageMs];
      const reply = (await this.#runBuffer('inspect', group, args)) as (Buffer | number | null)[];
      if (!reply[0]) return false;
      await this.#unspill(group, reply, 1, reply.length);
      const info = messageInfo(Buffer.from(key), group, reply, this.#rawHeader);
      // A flow parent: its children counted by state (flows/read.ts), read only for parents.
      if (info.children) {
        const read = (name: 'flow-children' | 'flow-states', g: number, args: Args) =>
          this.#runBuffer(name, g, args);
        info.children =
          (await childCounts(read, this.config.unitMs, group, info.id)) ?? info.children;
      }
      found = info;
      return true;
    });
    return found as MessageInfo<B> | null;
  }

  /**
   * When the dedupe window of a caller id ends (epoch ms, Redis clock), or null when none is
   * open; also for an id whose message is gone (done and no longer kept).
   */
  async dedupeUntil(id: string, options?: { group?: number }): Promise<number | null> {
    let until: number | null = null;
    await onFirstGroup(this.config.groups, id, options, async (group, key) => {
      const args = [this.config.unitMs, key, 0];
      const reply = (await this.run('inspect', group, args)) as unknown[];
      const window = reply[0] ? reply[9] : reply[1];
      if (window === null || window === undefined) return false;
      until = Number(window);
      return true;
    });
    return until;
  }

  /**
   * Resolves when the job is done (with its result) or dead (with its error), whether that
   * happened before the call (while its history is kept) or after. Rejects after `timeoutMs`
   * (default 30 s), when the id is not there (never added, cancelled, or finished and not
   * kept), and at once with ERR_SKYQ_CANCELLED when anyone cancels it meanwhile. However many
   * wait, a Queue has one reader per group waited on, and none polls. `onProgress` is called
   * with the job's progress as it comes.
   */
  waitFor(id: string, options: WaitForOptions = {}): Promise<WaitResult> {
    const get = (job: string, o?: { group?: number }) =>
      this.get(job, o) as Promise<MessageInfo | null>;
    const waiters = () =>
      (this.#waiters ??= new Waiters(this.client, this.config.prefix, async (job, group) =>
        endingOf(await get(job, { group })),
      ));
    return waitForJob(get, waiters, id, options);
  }

  /**
   * The groups' events (added, started, done, failed, dead, cancelled, rescheduled, stale) as
   * an async iterable; all but done, dead and cancelled are published only by queues and launchers with
   * `events: true`. Each event's `cursor`, passed back as `from`, reads on after it.
   */
  events(options?: EventsOptions): AsyncIterable<QueueEvent> {
    if (this.#scripts.closed) throw errors.closed('queue');
    const { prefix, groups } = this.config;
    return readEvents(this.client, prefix, groups, options, this.#closing.signal);
  }

  /** A page of the messages in one state, and the cursor of the next (see browse/list.ts). */
  list(state: ListState, options?: ListOptions): Promise<ListPage> {
    return this.#browser.list(state, options);
  }

  /** How many messages list() would find in each state, in one group or all. */
  listCounts(group?: number): Promise<StateCounts> {
    return this.#browser.counts(group);
  }

  /** Depths of every group; a group that cannot be read says why, the others are unaffected. */
  async counts(): Promise<GroupCounts[]> {
    return groupCounts(
      this.config,
      (group, args) => this.run('counts', group, args),
      () => this.#scripts.closed,
    );
  }

  /** Pauses one group, or all: claims lease nothing until resume(); every launcher honours it. */
  async pause(group?: number): Promise<number[]> {
    return this.#setPaused('on', group);
  }

  /** Resumes one group, or all, and wakes their consumers. */
  async resume(group?: number): Promise<number[]> {
    return this.#setPaused('off', group);
  }

  /** Promotes what is due and leases up to `max` ready messages, by priority then age. */
  async claim(group: number, max = 100, leaseMs = 30_000): Promise<Message<B>[]> {
    return (await this.poll(group, { max, leaseMs })).messages;
  }

  /** claim() with everything the runtime needs: next due time, and acks in the same call. */
  async poll(group: number, options: PollOptions = {}): Promise<PollResult<B>> {
    return this.#leases.poll(group, options) as Promise<PollResult<B>>;
  }

  /** Acks finished messages; returns how many were still the caller's (see Message.token). */
  async ack(messages: readonly Message<unknown>[]): Promise<number> {
    return this.#leases.ack(messages as readonly Message[]);
  }

  /**
   * Retries a failed message with its backoff, or dead-letters it after its last attempt
   * (at once with `{ retry: false }`, the error's text as the reason). An Error's stack (its
   * first 8 KiB) is kept with its message: get() tells it as `lastErrorStack`.
   * 'stale': the lease had passed to another consumer, and nothing changed.
   */
  async fail(
    message: Message<unknown>,
    error: unknown,
    options?: { retry?: boolean },
  ): Promise<Outcome> {
    const text = error instanceof Error ? error.message || error.name : String(error);
    const mode = options?.retry === false ? 'dead' : 'retry';
    return this.#leases.fail(message as Message, text, mode, stackOf(error));
  }

  /** Renews leases; returns how many were still the caller's. */
  async extendLease(messages: readonly Message<unknown>[], leaseMs: number): Promise<number> {
    return this.#leases.extend(messages as readonly Message[], leaseMs);
  }

  /**
   * Hands leases back (a consumer shutting down), without counting an attempt unless
   * `attempted` (the handler ran and would not stop).
   */
  async release(
    messages: readonly Message<unknown>[],
    options: { attempted?: boolean } = {},
  ): Promise<number> {
    return this.#leases.release(messages as readonly Message[], options.attempted === true);
  }

  /**
   * Records a running job's progress (a number from 0 to 100, or a JSON value up to 4 KiB):
   * get() shows it, waitFor's onProgress and events() are told. False when the lease is no
   * longer the caller's (as ack would refuse it). Handlers use `ctx.progress`, which batches.
   */
  async progress(message: Message<unknown>, value: unknown): Promise<boolean> {
    const report = { progress: progressText(value), logged: 0, lines: [] };
    return this.#reportOne(message as Message, report);
  }

  /**
   * Appends a line (up to 1 KiB) to a running job's log, which keeps its last 100 lines while
   * its record is kept. False when the lease is no longer the caller's. Handlers use `ctx.log`.
   */
  async log(message: Message<unknown>, line: string): Promise<boolean> {
    const report = { progress: null, logged: 1, lines: [checkLogLine(line)] };
    return this.#reportOne(message as Message, report);
  }

  #reportOne(message: Message, report: PendingReport): Promise<boolean> {
    const { groups, events } = this.config;
    const run = (group: number, args: Args) => this.run('report', group, args);
    return reportOne(run, groups, events, message, report);
  }

  /** @internal The reports of jobs of one group, checked already (src/runtime/reports.ts). */
  async sendReports(
    group: number,
    reports: ReadonlyMap<Message, PendingReport>,
  ): Promise<ReportOutcome> {
    const args = reportArgs(reports, this.config.events);
    return reportOutcome(await this.run('report', group, args));
  }

  /** @internal Runs one script against one group's keys (`buffers`: the reply's strings as Buffers). */
  run(name: ScriptName, group: number, args: Args, buffers = false): Promise<unknown> {
    return this.#scripts.run(name, group, args, buffers);
  }

  /** @internal Runs a script over several groups at once (see Scripts.runMulti). */
  runMulti(
    name: MultiGroupScriptName,
    routingKey: string,
    args: (string | number)[],
  ): Promise<unknown> {
    return this.#scripts.runMulti(name, routingKey, args);
  }

  /** run(), with the reply's strings as Buffers: ids and bodies keep their exact bytes. */
  #runBuffer(name: ScriptName, group: number, args: Args): Promise<unknown> {
    return this.#scripts.run(name, group, args, true);
  }

  /** Closes its connections (not a `connection` you gave) and ends its events() readers. */
  async close(): Promise<void> {
    if (this.#scripts.closed) return;
    this.#scripts.closed = true;
    this.#waiters?.close();
    this.#closing.abort();
    if (this.#ownsClient) await this.client.quit().catch(() => this.client.disconnect());
  }

  async #setPaused(state: 'on' | 'off', group: number | undefined): Promise<number[]> {
    const groups =
      group === undefined
        ? this.#scripts.keys.map((_, g) => g)
        : [checkGroup('group', group, this.config.groups)];
    const changed = await Promise.all(groups.map((g) => this.run('pause', g, [state])));
    return groups.filter((_, i) => changed[i] === 1);
  }
}
