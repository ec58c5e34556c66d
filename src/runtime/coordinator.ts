// The coordinator thread: holds a MessagePort to every actor for the debug
// protocol (ping, stat, mem), reads every actor's figures from shared memory,
// merges them, and publishes them to Redis for `skyq stats`.
import type { MessagePort } from 'node:worker_threads';
import type { ConnectionOptions } from '../redis/connection.js';
import { connect, type RedisClient } from '../redis/connection.js';
import type { ActorApi } from './actor.js';
import type { ActorView, LauncherStats } from './launcher-stats.js';
import { publishStats, withdrawStats } from './registry.js';
import { type Remote, release, remote, withTimeout } from './rpc.js';
import { type BlockFigures, StatBlock, summaries, totalFigures } from './stat-block.js';

export interface CoordinatorData {
  launcherId: string;
  host: string;
  pid: number;
  startedAt: number;
  groups: number[];
  prefix: string;
  /** where to publish live figures; null = do not publish */
  publish: ConnectionOptions | null;
  publishEveryMs: number;
}

export type DebugCommand = 'ping' | 'stat' | 'mem';

interface Slot {
  actor: Remote<ActorApi> | null;
  port: MessagePort | null;
  /** the group's figures, written by its actor (null until the first actor attached) */
  stats: StatBlock | null;
  threadId: number;
  restarts: number;
  lastCrash: string | null;
}

export class Coordinator {
  readonly #data: CoordinatorData;
  readonly #slots = new Map<number, Slot>();
  readonly #redis: RedisClient | null;
  readonly #timer: NodeJS.Timeout | undefined;

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
      });
    this.#redis = data.publish ? connect(data.publish, { name: 'skyq-coordinator' }) : null;
    if (this.#redis) this.#timer = setInterval(() => void this.#publish(), data.publishEveryMs);
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
  }

  noteCrash(group: number, reason: string): void {
    const slot = this.#slot(group);
    slot.restarts++;
    slot.lastCrash = reason;
  }

  async debug(group: number, command: DebugCommand, timeoutMs = 1000): Promise<unknown> {
    const actor = this.#slot(group).actor;
    if (!actor) return 'down';
    try {
      return await withTimeout(
        actor[command]() as Promise<unknown>,
        timeoutMs,
        `actor ${group} ${command}`,
      );
    } catch {
      return 'TIMEOUT';
    }
  }

  /** Reads every actor's block: no message to the actors, so it never waits on a busy one. */
  stats(): LauncherStats {
    const read: BlockFigures[] = [];
    const actors = [...this.#slots].map(([group, slot]): ActorView => {
      const view = { group, restarts: slot.restarts, lastCrash: slot.lastCrash };
      if (!slot.stats) return { ...view, status: 'down' };
      const figures = slot.stats.figures();
      read.push(figures);
      const stat = {
        ...figures,
        group,
        threadId: slot.threadId,
        summary: summaries(figures.histograms),
      };
      return { ...view, status: slot.actor ? 'ok' : 'down', stat };
    });
    const totals = totalFigures(read);
    const { launcherId, host, pid, startedAt } = this.#data;
    return {
      launcherId,
      host,
      pid,
      startedAt,
      at: Date.now(),
      actors,
      totals: { ...totals, summary: summaries(totals.histograms) },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    for (const group of this.#slots.keys()) this.detach(group);
    if (this.#redis) {
      await withdrawStats(this.#redis, this.#data.prefix, this.#data.launcherId).catch(
        () => undefined,
      );
      await this.#redis.quit().catch(() => undefined);
    }
  }

  async #publish(): Promise<void> {
    if (!this.#redis) return;
    try {
      await publishStats(this.#redis, this.#data.prefix, this.stats());
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
