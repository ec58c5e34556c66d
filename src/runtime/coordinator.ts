// The coordinator thread: holds a MessagePort to every actor, pulls their
// figures over comlink (a stuck actor shows as TIMEOUT, it never hangs the
// caller), merges them, and publishes them to Redis for `skyq stats`.
import type { MessagePort } from 'node:worker_threads';
import type { ConnectionOptions } from '../redis/connection.js';
import { connect, type RedisClient } from '../redis/connection.js';
import type { ActorApi } from './actor.js';
import {
  type ActorStat,
  addCounters,
  type Counters,
  emptyCounters,
  LatenessHistogram,
  type LatenessSummary,
} from './metrics.js';
import { publishStats, withdrawStats } from './registry.js';
import { type Remote, release, remote, withTimeout } from './rpc.js';

export interface ActorView {
  group: number;
  status: 'ok' | 'TIMEOUT' | 'down';
  restarts: number;
  lastCrash: string | null;
  stat?: ActorStat;
}

export interface LauncherStats {
  launcherId: string;
  host: string;
  pid: number;
  startedAt: number;
  at: number;
  actors: ActorView[];
  totals: Counters & { lateness: LatenessSummary };
}

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
      this.#slots.set(group, { actor: null, port: null, restarts: 0, lastCrash: null });
    this.#redis = data.publish ? connect(data.publish, { name: 'skyq-coordinator' }) : null;
    if (this.#redis) this.#timer = setInterval(() => void this.#publish(), data.publishEveryMs);
  }

  attach(group: number, port: MessagePort): void {
    this.detach(group);
    const slot = this.#slot(group);
    slot.port = port;
    slot.actor = remote<ActorApi>(port);
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

  async stats(timeoutMs = 1000): Promise<LauncherStats> {
    const totals = emptyCounters();
    const lateness = new LatenessHistogram();
    const actors = await Promise.all(
      [...this.#slots].map(async ([group, slot]): Promise<ActorView> => {
        const view = { group, restarts: slot.restarts, lastCrash: slot.lastCrash };
        const stat = await this.debug(group, 'stat', timeoutMs);
        if (stat === 'down' || stat === 'TIMEOUT') return { ...view, status: stat };
        const actorStat = stat as ActorStat;
        addCounters(totals, actorStat);
        lateness.addEncoded(actorStat.histogram);
        return { ...view, status: 'ok', stat: actorStat };
      }),
    );
    const { launcherId, host, pid, startedAt } = this.#data;
    return {
      launcherId,
      host,
      pid,
      startedAt,
      at: Date.now(),
      actors,
      totals: { ...totals, lateness: lateness.summary() },
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
      await publishStats(this.#redis, this.#data.prefix, await this.stats());
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
