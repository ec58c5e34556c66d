// The intake: moves what other programs leave in Redis for their own consumers into
// skyq's groups. Classic LPUSH/BRPOP lists (list-lanes.ts) and sorted sets used as delay
// queues (zset-lanes.ts) each go through a holding list of this launcher's in the
// source's slot (src/queue/intake/transfer.ts). This part is what both share: the
// registry where the launcher beats and keeps its holding lists, the adoption of dead
// launchers' holding lists (src/runtime/intake/recovery.ts), and the stop, which adds
// what the holding lists still hold.
import type { Logger } from 'pino';
import type { QueueOptions } from '../../queue/config.js';
import type { HoldingRef } from '../../queue/intake/holding.js';
import type { IntakeSpec } from '../../queue/intake/spec.js';
import type { ZsetIntakeSpec } from '../../queue/intake/zset-spec.js';
import type { Queue } from '../../queue/queue.js';
import { IntakeScripts } from '../../redis/intake-scripts.js';
import { every } from '../timers.js';
import type { WatchedZset } from '../watcher.js';
import { type IntakeListFigures, OncePerMinute } from './figures.js';
import { IntakeHalt } from './halt.js';
import { ListLanes } from './list-lanes.js';
import { drainHolding, IntakeRegistry, recoverDead } from './recovery.js';
import { ZsetLanes } from './zset-lanes.js';

export interface IntakeSettings {
  /** most items one step moves (default 200) */
  batch: number;
  /** how long one blocking BLMOVE waits before it is sent again (s) */
  blockSeconds: number;
  /** how often the launcher says it is alive and looks for dead ones (ms) */
  beatMs: number;
  /** a launcher silent this long is dead: its holding lists are adopted (ms) */
  deadAfterMs: number;
}

export const DEFAULT_INTAKE_SETTINGS: IntakeSettings = {
  batch: 200,
  blockSeconds: 2,
  beatMs: 1000,
  deadAfterMs: 6000,
};

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class Intake {
  readonly #queue: Queue;
  readonly #scripts: IntakeScripts;
  readonly #registry: IntakeRegistry;
  readonly #lists: ListLanes;
  readonly #zsets: ZsetLanes;
  readonly #launcherId: string;
  readonly #log: Logger;
  readonly #settings: IntakeSettings;
  readonly #notes = new OncePerMinute();
  readonly #halt: IntakeHalt;
  #recovering: Promise<void> | null = null;
  #beatTimer: NodeJS.Timeout | undefined;
  #closing = false;
  /** items this launcher added from other launchers' holding lists */
  recovered = 0;

  constructor(
    queue: Queue,
    where: QueueOptions,
    sources: { lists: IntakeSpec[]; zsets: ZsetIntakeSpec[] },
    launcherId: string,
    log: Logger,
    settings: IntakeSettings = DEFAULT_INTAKE_SETTINGS,
  ) {
    this.#queue = queue;
    this.#scripts = new IntakeScripts(queue.client);
    this.#registry = new IntakeRegistry(queue, this.#scripts, launcherId, settings.deadAfterMs);
    this.#launcherId = launcherId;
    this.#log = log;
    this.#settings = settings;
    const { lists, zsets } = sources;
    const halt = new IntakeHalt(log);
    this.#halt = halt;
    const { batch, blockSeconds } = settings;
    const laneSettings = { batch, blockSeconds, halt };
    this.#lists = new ListLanes(queue, where, this.#scripts, lists, launcherId, log, laneSettings);
    this.#zsets = new ZsetLanes(queue, this.#scripts, zsets, launcherId, log, laneSettings);
  }

  /**
   * Registers the holding lists, adopts those of dead launchers, then starts moving.
   * `zsetFallbackMs`: how often an idle sorted set is read when the watcher does not read it
   * (0: the watcher does).
   */
  async start(zsetFallbackMs = 0): Promise<void> {
    const dead = await this.#registry.beat(this.#refs());
    await this.#recover(dead);
    this.#lists.start();
    this.#zsets.start(zsetFallbackMs);
    this.#beatTimer = every(() => void this.#beat(), this.#settings.beatMs);
  }

  /** The sorted sets, for the watcher (their heads are read in its calls). */
  watchedZsets(): WatchedZset[] {
    return this.#zsets.watched();
  }

  figures(): IntakeListFigures[] {
    return [...this.#lists.figures(), ...this.#zsets.figures()];
  }

  /**
   * Stops moving, adds what the holding lists still hold, and removes them. A holding list
   * that cannot be emptied now (Redis away) stays registered: a launcher adopts it later.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#beatTimer);
    await Promise.all([this.#lists.stop(), this.#zsets.stop()]);
    await this.#recovering;
    const drain = (ref: HoldingRef) =>
      drainHolding(this.#queue, this.#scripts, this.#registry, ref);
    await this.#lists.drainAll(drain);
    await this.#zsets.drainAll(drain);
    if (this.#refs().length === 0) await this.#registry.leave().catch(() => undefined);
  }

  /** The holding lists registered for this launcher (all but those emptied at close). */
  #refs(): HoldingRef[] {
    return [...this.#lists.refs(), ...this.#zsets.refs()];
  }

  async #beat(): Promise<void> {
    try {
      const dead = await this.#registry.beat(this.#refs());
      this.#halt.beat();
      if (dead.length > 0 && !this.#recovering && !this.#closing) {
        this.#recovering = this.#recover(dead).finally(() => {
          this.#recovering = null;
        });
      }
    } catch (error) {
      if (this.#halt.refused(error)) return;
      this.#notes.take('beat', messageOf(error)).log &&
        this.#log.error({ event: 'intake-error', err: messageOf(error) }, 'intake: beat failed');
    }
    this.#lists.refreshLengths();
  }

  async #recover(dead: HoldingRef[]): Promise<void> {
    if (dead.length === 0) return;
    try {
      const queue = this.#queue;
      this.recovered += await recoverDead(
        queue,
        this.#scripts,
        this.#registry,
        this.#launcherId,
        dead,
        this.#log,
      );
    } catch (error) {
      this.#notes.take('recover', messageOf(error)).log &&
        this.#log.error(
          { event: 'intake-error', err: messageOf(error) },
          'intake: recovery failed',
        );
    }
  }
}
