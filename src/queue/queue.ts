// The Queue: add, cancel, reschedule and inspect messages, plus the consumer primitives (claim,
// ack, fail, extendLease, release) the actor runtime is built on. Each state change is one Lua
// script call on one group's hash slot. The class is the API; its parts (parts.ts) do the work.

import { errors } from '../base/errors.js';
import { connect, type RedisClient } from '../redis/connection.js';
import type { MultiGroupScriptName, ScriptName } from '../redis/scripts.js';
import { addPrepared, singleAddError } from './add-bulk.js';
import { type AddOptions, prepareItems, type RescheduleOptions } from './add-options.js';
import type { ListOptions, ListPage, ListState, StateCounts } from './browse/list.js';
import { cancelMessage, rescheduleMessage, setPaused } from './changes.js';
import type { RedisClock } from './clock.js';
import { type QueueConfig, type QueueOptions, queueConfig } from './config.js';
import type { GroupCounts } from './counts.js';
import type { DeadLetters } from './dead-letters.js';
import type { QueueEvent } from './events/event.js';
import { type EventsOptions, readEvents } from './events/reader.js';
import type { Flows } from './flows/flows.js';
import { type Args, GroupScripts } from './group-scripts.js';
import type { WaitForOptions, WaitResult } from './history/wait-for.js';
import type { Outcome, PollOptions } from './leases.js';
import type { Message, PollResult } from './message.js';
import type { MessageInfo } from './message-info.js';
import { type QueueParts, queueParts } from './parts.js';
import type { RateLimits } from './ratelimit/buckets.js';
import type { Body } from './record.js';
import {
  type PendingReport,
  type ReportOutcome,
  reportLine,
  reportProgress,
  sendReports,
} from './reports.js';
import type { Schedules } from './schedules/schedules.js';

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
  /** what the methods delegate to (parts.ts) */
  readonly #parts: QueueParts<B>;
  readonly #ownsClient: boolean;
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
    this.client.on('ready', () => void this.#parts.ensureFormat().catch(() => undefined));
    this.#parts = queueParts<B>({
      config: this.config,
      client: this.client,
      scripts: this.#scripts,
      run: (name, group, args, buffers) => this.run(name, group, args, buffers),
      runMulti: (name, key, args) => this.runMulti(name, key, args),
      clock: (group) => this.clock(group),
      get: (id, o) => this.get(id, o) as Promise<MessageInfo | null>,
    });
    this.deadLetters = this.#parts.deadLetters;
    this.schedules = this.#parts.schedules;
    this.rateLimits = this.#parts.rateLimits;
    this.flows = this.#parts.flows;
  }

  /**
   * Resolves once connected, with Redis's clock measured and the data format checked (rejects
   * when a newer skyq wrote it: see format.ts). Scripts are not loaded here: ioredis sends a
   * script's text with its first call on each connection whatever the server holds, so loading
   * them all beforehand only sent ~1.8 MB more (scripts.ts). `preload` is kept for callers that
   * pass it and changes nothing.
   */
  async ready(_options: { preload?: boolean } = {}): Promise<void> {
    await this.clock(0)
      .measure()
      .catch((error) => {
        throw this.#scripts.explain(error);
      });
    await this.#parts.ensureFormat();
  }

  /** Redis's clock for a group's server (the same one for every group on a standalone server). */
  clock(group: number): RedisClock {
    return this.#parts.clocks.of(group);
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
    const prepared = prepareItems(this.config, items);
    if (this.#scripts.closed) throw errors.closed('queue');
    this.#parts.turns.spread(prepared);
    return addPrepared(this.#parts.adder, prepared);
  }

  /**
   * Removes a delayed or ready message, or a waiting flow parent with its pending children;
   * false when unknown, running or dead. A flow child whose parent waits for it is refused
   * (ERR_SKYQ_FLOW) unless it was added as optional.
   */
  async cancel(id: string | Buffer, options?: { group?: number }): Promise<boolean> {
    return cancelMessage(this, this.flows as Flows<unknown>, id, options);
  }

  /** Gives a delayed or ready message a new due time; false when unknown, running or dead (a
   * schedule's pending occurrence only sooner: pushed back it rejects, docs/schedules.md). */
  async reschedule(id: string | Buffer, options: RescheduleOptions): Promise<boolean> {
    return rescheduleMessage(this, id, options);
  }

  /**
   * Where one message is and how it went: state, due time, attempts, errors, body; for a kept done
   * job its result. Null for an id it does not know (never added, cancelled, purged, or done and no
   * longer kept).
   */
  async get(id: string | Buffer, options?: { group?: number }): Promise<MessageInfo<B> | null> {
    return this.#parts.reads.get(id, options) as Promise<MessageInfo<B> | null>;
  }

  /**
   * When the dedupe window of a caller id ends (epoch ms, Redis clock), or null when none is
   * open; also for an id whose message is gone (done and no longer kept).
   */
  async dedupeUntil(id: string, options?: { group?: number }): Promise<number | null> {
    return this.#parts.reads.dedupeUntil(id, options);
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
    return this.#parts.reads.waitFor(id, options);
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
    return this.#parts.browser.list(state, options);
  }

  /** How many messages list() would find in each state, in one group or all. */
  listCounts(group?: number): Promise<StateCounts> {
    return this.#parts.browser.counts(group);
  }

  /** Depths of every group; a group that cannot be read says why, the others are unaffected. */
  async counts(): Promise<GroupCounts[]> {
    return this.#parts.counts();
  }

  /** Pauses one group, or all: claims lease nothing until resume(); every launcher honours it. */
  async pause(group?: number): Promise<number[]> {
    return setPaused(this, 'on', group);
  }

  /** Resumes one group, or all, and wakes their consumers. */
  async resume(group?: number): Promise<number[]> {
    return setPaused(this, 'off', group);
  }

  /** Promotes what is due and leases up to `max` ready messages, by priority then age. */
  async claim(group: number, max = 100, leaseMs = 30_000): Promise<Message<B>[]> {
    return (await this.poll(group, { max, leaseMs })).messages;
  }

  /** claim() with everything the runtime needs: next due time, and acks in the same call. */
  async poll(group: number, options: PollOptions = {}): Promise<PollResult<B>> {
    return this.#parts.leases.poll(group, options) as Promise<PollResult<B>>;
  }

  /** Acks finished messages; returns how many were still the caller's (see Message.token). */
  async ack(messages: readonly Message<unknown>[]): Promise<number> {
    return this.#parts.leases.ack(messages as readonly Message[]);
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
    return this.#parts.leases.failWith(message as Message, error, options?.retry !== false);
  }

  /** Renews leases; returns how many were still the caller's. */
  async extendLease(messages: readonly Message<unknown>[], leaseMs: number): Promise<number> {
    return this.#parts.leases.extend(messages as readonly Message[], leaseMs);
  }

  /**
   * Hands leases back (a consumer shutting down), without counting an attempt unless
   * `attempted` (the handler ran and would not stop).
   */
  async release(
    messages: readonly Message<unknown>[],
    options: { attempted?: boolean } = {},
  ): Promise<number> {
    return this.#parts.leases.release(messages as readonly Message[], options.attempted === true);
  }

  /**
   * Records a running job's progress (a number from 0 to 100, or a JSON value up to 4 KiB):
   * get() shows it, waitFor's onProgress and events() are told. False when the lease is no
   * longer the caller's (as ack would refuse it). Handlers use `ctx.progress`, which batches.
   */
  async progress(message: Message<unknown>, value: unknown): Promise<boolean> {
    return reportProgress(this, message as Message, value);
  }

  /**
   * Appends a line (up to 1 KiB) to a running job's log, which keeps its last 100 lines while
   * its record is kept. False when the lease is no longer the caller's. Handlers use `ctx.log`.
   */
  async log(message: Message<unknown>, line: string): Promise<boolean> {
    return reportLine(this, message as Message, line);
  }

  /** @internal The reports of jobs of one group, checked already (src/runtime/reports.ts). */
  async sendReports(
    group: number,
    reports: ReadonlyMap<Message, PendingReport>,
  ): Promise<ReportOutcome> {
    return sendReports(this, group, reports);
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

  /** Closes its connections (not a `connection` you gave) and ends its events() readers. */
  async close(): Promise<void> {
    if (this.#scripts.closed) return;
    this.#scripts.closed = true;
    this.#parts.reads.close();
    this.#closing.abort();
    if (this.#ownsClient) await this.client.quit().catch(() => this.client.disconnect());
  }
}
