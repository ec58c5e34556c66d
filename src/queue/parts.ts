// The parts a Queue is made of (dead letters, browser, schedules, rate limits, leases, adder,
// flows, reads by id, clocks, group turns, counts, the format check) and how each reaches
// Redis. Apart from queue.ts so the class reads as its API and the wiring has one place. Which
// calls go through Queue.run (looked up at each call, so a replacement of it sees them) and
// which go straight to the scripts for Buffer replies is as it was in the Queue's constructor:
// keep it so.
import type { RedisClient } from '../redis/connection.js';
import type { MultiGroupScriptName, ScriptName } from '../redis/scripts.js';
import { type AddContext, addContextOf, GroupTurns } from './add-bulk.js';
import { Browser } from './browse/list.js';
import { type RedisClock, ServerClocks } from './clock.js';
import type { QueueConfig } from './config.js';
import { type GroupCounts, groupCounts } from './counts.js';
import { DeadLetters, type ReadSpillStart } from './dead-letters.js';
import { Flows } from './flows/flows.js';
import { ensureFormat } from './format.js';
import type { Args, GroupScripts } from './group-scripts.js';
import { Leases } from './leases.js';
import type { MessageInfo } from './message-info.js';
import { RateLimits } from './ratelimit/buckets.js';
import { Reads } from './reads.js';
import { headerOf } from './record.js';
import { Schedules } from './schedules/schedules.js';
import { type Unspill, unspill, unspillStart } from './spill.js';

/** What the parts take from their Queue. */
export interface QueueBase {
  config: QueueConfig;
  client: RedisClient;
  scripts: GroupScripts;
  /** Queue.run */
  run(name: ScriptName, group: number, args: Args, buffers?: boolean): Promise<unknown>;
  /** Queue.runMulti */
  runMulti(
    name: MultiGroupScriptName,
    routingKey: string,
    args: (string | number)[],
  ): Promise<unknown>;
  /** Queue.clock */
  clock(group: number): RedisClock;
  /** Queue.get */
  get(id: string, options?: { group?: number }): Promise<MessageInfo | null>;
}

export interface QueueParts<B> {
  deadLetters: DeadLetters;
  schedules: Schedules;
  rateLimits: RateLimits;
  flows: Flows<B>;
  browser: Browser;
  leases: Leases;
  adder: AddContext;
  reads: Reads;
  clocks: ServerClocks;
  /** the group whose turn it is, for messages and flow nodes that named none */
  turns: GroupTurns;
  /** Queue.counts: depths of every group */
  counts(): Promise<GroupCounts[]>;
  /** The format checked and raised in every slot (format.ts); again after each reconnect. */
  ensureFormat(): Promise<number>;
}

/** Builds a Queue's parts. */
export function queueParts<B>(base: QueueBase): QueueParts<B> {
  const { config, client, scripts } = base;
  const run = (name: ScriptName, group: number, args: Args) => base.run(name, group, args);
  /** run(), with the reply's strings as Buffers: ids and bodies keep their exact bytes. */
  const runBuffer = (name: ScriptName, group: number, args: Args) =>
    scripts.run(name, group, args, true);
  const unspillAt: Unspill = (group, records, at, step) =>
    unspill(client, config.prefix, group, records, at, step);
  const readStart: ReadSpillStart = (group, records, at, step, bytes) =>
    unspillStart(client, config.prefix, group, records, at, step, bytes);
  const defaults = { enqueuedAt: null, priority: 0, maxAttempts: config.attempts };
  const rawHeader = headerOf({ ...defaults, backoff: config.backoff });
  const deadLetters = new DeadLetters(config, runBuffer, unspillAt, readStart);
  const browser = new Browser(
    config,
    (name, group, args) => runBuffer(name, group, args) as Promise<(Buffer | null)[]>,
    readStart,
  );
  const schedules = new Schedules({
    config,
    run: (name, group, args, buffers) => base.run(name, group, args, buffers),
    now: (group) => base.clock(group).now(),
  });
  const rateLimits = new RateLimits(
    config.prefix,
    config.groups,
    (name, keys, args) => scripts.runKeys(name, keys, args),
    run,
  );
  const leases = new Leases(config, rawHeader, run, runBuffer, unspillAt, (group) =>
    flows.relay.kick(group),
  );
  const adder = addContextOf(client, config, {
    now: (group, at) => base.clock(group).now(at),
    run,
    explain: (error) => scripts.explain(error),
  });
  const turns = new GroupTurns(config.groups);
  const flows = new Flows<B>({
    adder: {
      ...adder,
      run: (group, args) => run('flow-add', group, args),
      taken: (group, args) => run('flow-taken', group, args),
      pickGroup: () => turns.next(),
    },
    read: runBuffer,
    relay: runBuffer,
    unitMs: config.unitMs,
    groups: config.groups,
    find: async (id, group) => {
      const info = await base.get(id, group === undefined ? undefined : { group });
      return info && { id: info.id, group: info.group, name: info.name, state: info.state };
    },
  });
  const reads = new Reads({
    config,
    client,
    rawHeader,
    run,
    runBuffer,
    unspill: unspillAt,
    get: (id, o) => base.get(id, o),
  });
  const clocks = new ServerClocks(
    client,
    (group) => run('time', group, []),
    (error) => scripts.explain(error),
  );
  const ensure = () =>
    ensureFormat(
      (key, version, raise) => base.runMulti('format', key, [version, raise ? '1' : '']),
      config.prefix,
      config.groups,
      config.raiseFormat,
    );
  return {
    deadLetters,
    schedules,
    rateLimits,
    flows,
    browser,
    leases,
    adder,
    reads,
    clocks,
    turns,
    ensureFormat: ensure,
    counts: () =>
      groupCounts(
        config,
        (group, args) => run('counts', group, args),
        () => scripts.closed,
      ),
  };
}
