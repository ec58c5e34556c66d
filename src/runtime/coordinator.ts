// The coordinator thread: holds a MessagePort to every actor for the debug
// protocol (ping, stat, mem), reads every actor's figures from shared memory,
// merges them, publishes them to Redis for `skyq stats`, and runs the watcher
// that pokes idle actors about work nobody told them of.
import type { MessagePort } from 'node:worker_threads';
import type { QueueOptions } from '../queue/config.js';
import type { IntakeSpec } from '../queue/intake/spec.js';
import type { ZsetIntakeSpec } from '../queue/intake/zset-spec.js';
import { Queue } from '../queue/queue.js';
import type { ActorApi } from './actor.js';
import { DoneRates } from './done-rate.js';
import { handBack } from './hand-back.js';
import { Intake } from './intake/intake.js';
import type { ActorView, LauncherStats } from './launcher-stats.js';
import { intakeLogFile } from './log-names.js';
import { type FileLogger, fileLogger } from './logger.js';
import { publishStats, withdrawStats } from './registry.js';
import { type Remote, release, remote, withTimeout } from './rpc.js';
import type { ServerState } from './server-checks.js';
import { StatBlock, totalFigures } from './stat-block.js';
import { later, untilNext } from './timers.js';
import { Watcher, type WatchSettings } from './watcher.js';

export interface CoordinatorData {
  launcherId: string;
  host: string;
  pid: number;
  startedAt: number;
  groups: number[];
  /** where the groups are (the coordinator's own connection: publishing and watching) */
  queue: QueueOptions;
  /** publish live figures to Redis for `skyq stats` */
  publish: boolean;
  publishEveryMs: number;
  watch: WatchSettings;
  /** lists the intake moves into skyq (none: no intake) */
  intake: IntakeSpec[];
  /** sorted sets the intake consumes as they fall due (zsetIntake) */
  zsetIntake: ZsetIntakeSpec[];
  logDir: string;
  logLevel: string;
}

/** What `launcher.debug(group, command)` asks an actor: skynet's debug protocol. */
export type DebugCommand = 'ping' | 'stat' | 'mem';

/** Unchanged figures are published again this often, well within the registry's TTL. */
const REFRESH_MS = 2000;

interface Slot {
  actor: Remote<ActorApi> | null;
  port: MessagePort | null;
  /** the group's figures, written by its actor (null until the first actor attached) */
  stats: StatBlock | null;
  threadId: number;
  restarts: number;
  lastCrash: string | null;
  /** debug commands on their way: one at a time each, so an actor that never answers leaves no pile */
  calling: Set<DebugCommand>;
}

export class Coordinator {
  readonly #data: CoordinatorData;
  readonly #slots = new Map<number, Slot>();
  readonly #queue: Queue;
  readonly #watcher: Watcher;
  #timer: NodeJS.Timeout | undefined;
  #published = { mark: '', at: 0 };
  readonly #rates = new DoneRates();
  /** the launcher's latest check of each server (eviction policy, clock), published with the figures */
  #servers: ServerState[] = [];
  readonly #intake: Intake | null = null;
  readonly #intakeLog: FileLogger | null = null;
  /** things the coordinator could not do (no keyspace notifications, …), for the launcher's log */
  readonly notes: string[] = [];

  constructor(data: CoordinatorData) {
    this.#data = data;
    for (const group of data.groups)
      this.#slots.set(group, {
        actor: null,
        port: null,
        stats: null,
        threadId: 0,
        restarts: 0,
        lastCrash: null,
        calling: new Set(),
      });
    // No auto-pipelining: on a cluster it refuses a call whose keys span slots (watch-many's do).
    this.#queue = new Queue({
      ...data.queue,
      connectionName: 'skyq-coordinator',
      autoPipelining: false,
      warnEviction: false, // the launcher checks every server itself
      unreachableMs: 0, // waits for its answers, as the actors do (actor-thread.ts)
    });
    this.#queue.client.on('error', () => undefined); // the actors report outages
    if (data.intake.length > 0 || data.zsetIntake.length > 0) {
      this.#intakeLog = fileLogger(intakeLogFile(data.logDir), { intake: true }, data.logLevel);
      this.#intake = new Intake(
        this.#queue,
        data.queue,
        { lists: data.intake, zsets: data.zsetIntake },
        data.launcherId,
        this.#intakeLog.logger,
      );
    }
    this.#watcher = new Watcher(
      this.#queue,
      data.groups,
      (group) => {
        const slot = this.#slots.get(group);
        const actor = slot?.actor;
        if (!slot?.stats || !actor) return null;
        const stats = slot.stats;
        return {
          plannedAt: () => stats.plannedAt,
          paused: () => stats.state === 'paused',
          poke: () => void actor.poke(),
        };
      },
      data.watch,
      (problem) => this.notes.push(problem),
      this.#intake?.watchedZsets(),
    );
  }

  /** Starts publishing and watching; resolves with what the watcher uses. */
  async start(): Promise<{ keyspaceEvents: boolean; notes: string[] }> {
    if (this.#data.publish) {
      // On a grid, as the watcher's slow ticks: an idle launcher wakes once a second for both.
      const every = this.#data.publishEveryMs;
      const tick = () => {
        this.#timer = later(tick, untilNext(every));
        void this.#publish();
      };
      this.#timer = later(tick, untilNext(every));
    }
    await this.#watcher.start();
    // Without the watcher's ticks, an idle sorted set is read once a second by its own lane.
    await this.#intake?.start(this.#data.watch.intervalMs > 0 ? 0 : 1000);
    return { keyspaceEvents: this.#watcher.notified, notes: this.notes };
  }

  /** Stops the intake (what its holding lists hold goes in first); the actors go on. */
  async stopIntake(): Promise<void> {
    await this.#intake?.close();
    this.#intakeLog?.flush();
  }

  attach(group: number, port: MessagePort, stats: SharedArrayBuffer, threadId: number): void {
    this.detach(group);
    const slot = this.#slot(group);
    slot.port = port;
    slot.actor = remote<ActorApi>(port);
    slot.stats ??= new StatBlock(stats);
    slot.threadId = threadId;
  }

  detach(group: number): void {
    const slot = this.#slot(group);
    if (slot.actor) release(slot.actor);
    slot.port?.close();
    slot.actor = null;
    slot.port = null;
    // Calls to the old thread are never answered now: a new one starts with none out.
    slot.calling = new Set();
  }

  noteServers(servers: ServerState[]): void {
    this.#servers = servers;
  }

  noteCrash(group: number, reason: string): void {
    const slot = this.#slot(group);
    slot.restarts++;
    slot.lastCrash = reason;
  }

  /**
   * Hands back what a dead actor thread of `group` held, read from its lease mirror, saying why
   * it died (hand-back.ts); resolves with how many leases were still its own.
   */
  handBack(group: number, leases: SharedArrayBuffer, reason: string): Promise<number> {
    return handBack(this.#queue, group, leases, reason);
  }

  async debug(group: number, command: DebugCommand, timeoutMs = 1000): Promise<unknown> {
    const slot = this.#slot(group);
    const actor = slot.actor;
    if (!actor) return 'down';
    // comlink keeps a call that is never answered forever: while one is out, do not add more.
    if (slot.calling.has(command)) return 'TIMEOUT';
    slot.calling.add(command);
    const call = (actor[command]() as Promise<unknown>).finally(() => slot.calling.delete(command));
    try {
      return await withTimeout(call, timeoutMs, `actor ${group} ${command}`);
    } catch {
      return 'TIMEOUT';
    }
  }

  /**
   * Reads every actor's block: no message to the actors, so it never waits on a busy one.
   * Without `buckets`, histograms come as percentiles only, but for the launcher's totals when
   * `totalBuckets` (what other processes need: see registry.ts).
   */
  stats(buckets = true, totalBuckets = buckets): LauncherStats {
    const blocks: StatBlock[] = [];
    const actors = [...this.#slots].map(([group, slot]): ActorView => {
      const view = { group, restarts: slot.restarts, lastCrash: slot.lastCrash };
      if (!slot.stats) return { ...view, status: 'down' };
      blocks.push(slot.stats);
      const rate = this.#rates.rate(group);
      const stat = {
        ...slot.stats.figures(buckets),
        group,
        threadId: slot.threadId,
        ...(rate === undefined ? {} : { donePerSecond: rate }),
      };
      return { ...view, status: slot.actor ? 'ok' : 'down', stat };
    });
    const { launcherId, host, pid, startedAt } = this.#data;
    return {
      launcherId,
      host,
      pid,
      startedAt,
      at: Date.now(),
      actors,
      ...(this.#intake ? { intake: this.#intake.figures() } : {}),
      totals: totalFigures(blocks, buckets, totalBuckets),
      servers: this.#servers,
    };
  }

  async close(): Promise<void> {
    await this.stopIntake();
    clearTimeout(this.#timer);
    this.#watcher.close();
    for (const group of this.#slots.keys()) this.detach(group);
    if (this.#data.publish) {
      const { client, config } = this.#queue;
      await withdrawStats(client, config.prefix, this.#data.launcherId).catch(() => undefined);
    }
    await this.#queue.close();
  }

  /**
   * Publishes what other processes show. An idle launcher's figures do not change: they are
   * then only refreshed before they expire, not sent every second.
   */
  async #publish(): Promise<void> {
    const done = new Map<number, number>();
    for (const [group, slot] of this.#slots)
      if (slot.stats) done.set(group, slot.stats.get('done'));
    this.#rates.sample(Date.now(), done);
    const stats = this.stats(false, true);
    const mark = JSON.stringify([
      stats.actors.map((a) => [a.status, a.restarts, a.stat]),
      stats.servers?.map((s) => [s.policy, s.skewMs, s.dataLostTotal]),
      stats.intake?.map((l) => [l.length, l.items, l.error]),
    ]);
    if (mark === this.#published.mark && Date.now() - this.#published.at < REFRESH_MS) return;
    try {
      await publishStats(this.#queue.client, this.#queue.config.prefix, stats);
      this.#published = { mark, at: Date.now() };
    } catch {
      // Redis unreachable for a moment: the next tick tries again.
    }
  }

  #slot(group: number): Slot {
    const slot = this.#slots.get(group);
    if (!slot) throw new Error(`coordinator has no group ${group}`);
    return slot;
  }
}
