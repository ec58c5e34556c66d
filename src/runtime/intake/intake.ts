// The intake: moves items that other programs LPUSH onto classic Redis lists into
// skyq's groups, as a BRPOP consumer of those lists would take them. One loop
// takes from the first list (in the order given) that has items, so an earlier
// list wins while it has any, exactly like `BRPOP high normal low`. While a list
// looks empty, a connection of its own blocks in Redis on it (BLMOVE with a
// timeout, into the holding list): an item pushed onto an idle list is moved the
// moment it arrives, and an idle intake sends nothing but those blocking calls.
// Every move goes through the launcher's holding list (src/queue/intake/transfer.ts),
// and src/runtime/intake/recovery.ts adopts the holding lists of launchers that died.
import type { Logger } from 'pino';
import type { QueueOptions } from '../../queue/config.js';
import { type HoldingRef, ownHolding } from '../../queue/intake/holding.js';
import type { IntakeSpec } from '../../queue/intake/spec.js';
import { hand, take } from '../../queue/intake/transfer.js';
import type { Queue } from '../../queue/queue.js';
import { connect, type RedisClient } from '../../redis/connection.js';
import { IntakeScripts } from '../../redis/intake-scripts.js';
import { every } from '../timers.js';
import { type IntakeListFigures, OncePerMinute, RateWindow } from './figures.js';
import { drainHolding, IntakeRegistry, recoverDead } from './recovery.js';
import { Signal, sleep } from './signal.js';

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

/** Bytes one step reads at most (when items are big, fewer of them). */
const STEP_BYTES = 4 * 1024 * 1024;

interface Lane {
  spec: IntakeSpec;
  ref: HoldingRef;
  /** the blocking connection (only while its list looks empty does it wait in Redis) */
  blocking: RedisClient;
  /** estimates: items in the source list, and in the holding list; work when either is > 0 */
  pending: number;
  held: number;
  /** fired when the lane runs out of work, for its blocker */
  idle: Signal;
  items: number;
  length: number | null;
  error: string | null;
  rate: RateWindow;
  /** mean item size of recent steps, to keep a step's bytes bounded */
  meanBytes: number;
  released: boolean;
}

const hasWork = (lane: Lane) => lane.pending > 0 || lane.held > 0;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class Intake {
  readonly #queue: Queue;
  readonly #scripts: IntakeScripts;
  readonly #registry: IntakeRegistry;
  readonly #lanes: Lane[];
  readonly #launcherId: string;
  readonly #log: Logger;
  readonly #settings: IntakeSettings;
  readonly #notes = new OncePerMinute();
  readonly #wake = new Signal();
  #loop: Promise<void> | null = null;
  #blockers: Promise<void>[] = [];
  #recovering: Promise<void> | null = null;
  #beatTimer: NodeJS.Timeout | undefined;
  #closing = false;
  /** items this launcher added from other launchers' holding lists */
  recovered = 0;

  constructor(
    queue: Queue,
    where: QueueOptions,
    specs: IntakeSpec[],
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
    const prefix = queue.config.prefix;
    this.#lanes = specs.map((spec) => {
      const blocking = connect(where, { name: 'skyq-intake', blocking: true });
      blocking.on('error', () => undefined); // reported by the blocker's failed calls
      return {
        spec,
        ref: ownHolding(prefix, launcherId, spec),
        blocking,
        pending: 1, // unknown: the first step finds out
        held: 1,
        idle: new Signal(),
        items: 0,
        length: null,
        error: null,
        rate: new RateWindow(),
        meanBytes: 0,
        released: false,
      };
    });
  }

  /** Registers the holding lists, adopts those of dead launchers, then starts moving. */
  async start(): Promise<void> {
    const dead = await this.#registry.beat(this.#lanes.map((lane) => lane.ref));
    await this.#recover(dead);
    this.#loop = this.#run();
    this.#blockers = this.#lanes.map((lane) => this.#block(lane));
    this.#beatTimer = every(() => void this.#beat(), this.#settings.beatMs);
  }

  figures(): IntakeListFigures[] {
    return this.#lanes.map((lane) => ({
      list: lane.spec.list,
      group: lane.spec.group,
      priority: lane.spec.priority,
      length: lane.length,
      items: lane.items,
      rate: Math.round(lane.rate.rate(lane.items) * 10) / 10,
      error: lane.error,
    }));
  }

  /**
   * Stops moving, adds what the holding lists still hold, and removes them. A holding list
   * that cannot be emptied now (Redis away) stays registered: a launcher adopts it later.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#beatTimer);
    this.#wake.fire();
    for (const lane of this.#lanes) lane.idle.fire();
    await this.#loop;
    // A blocked BLMOVE ends with its connection. One Redis served just before it saw the
    // close has put its item in the holding list: the drain below adds it, or, when it
    // came later still, the list is not removed and is adopted later.
    for (const lane of this.#lanes) lane.blocking.disconnect();
    await Promise.all(this.#blockers);
    await this.#recovering;
    for (const lane of this.#lanes) {
      try {
        lane.items += await drainHolding(this.#queue, this.#scripts, this.#registry, lane.ref);
        lane.released = (await this.#queue.client.exists(lane.ref.key)) === 0;
      } catch (error) {
        this.#note(lane, 'could not empty its holding list at stop', error);
      }
    }
    if (this.#lanes.every((lane) => lane.released)) {
      await this.#registry.leave().catch(() => undefined);
    }
  }

  async #run(): Promise<void> {
    while (!this.#closing) {
      const lane = this.#lanes.find(hasWork);
      if (!lane) {
        await this.#wake.wait();
        continue;
      }
      await this.#step(lane);
      if (!hasWork(lane)) lane.idle.fire();
    }
  }

  /** Moves one batch from the lane's list into its holding list and on into its group. */
  async #step(lane: Lane): Promise<void> {
    const { batch } = this.#settings;
    const max = Math.max(1, Math.min(batch, Math.floor(STEP_BYTES / Math.max(1, lane.meanBytes))));
    const moves = Math.max(0, Math.min(lane.pending, max - lane.held));
    try {
      const taken = await take(this.#queue, lane.ref, lane.spec.list, moves, max);
      if (taken.sourceError) {
        lane.pending = 0;
        this.#noteList(lane, taken.sourceError);
      } else {
        lane.pending = taken.sourceLength ?? 0;
        lane.length = taken.sourceLength;
        this.#clearNote(lane);
      }
      lane.held = taken.held;
      const count = taken.items.length;
      if (count === 0) return;
      const kept = await hand(this.#queue, this.#scripts, lane.ref, taken);
      // Not kept: another launcher adopted the holding list; the next step reads it afresh.
      if (kept) lane.held -= count;
      lane.items += count;
      const bytes = taken.items.reduce((sum, item) => sum + item.length, 0) / count;
      lane.meanBytes = lane.meanBytes === 0 ? bytes : (lane.meanBytes * 3 + bytes) / 4;
    } catch (error) {
      this.#note(lane, 'could not move items', error);
      if (!this.#closing) await sleep(1000);
    }
  }

  /** While the lane's list looks empty, waits in Redis for its next item. */
  async #block(lane: Lane): Promise<void> {
    const { list } = lane.spec;
    while (!this.#closing) {
      if (hasWork(lane)) {
        await lane.idle.wait();
        continue;
      }
      try {
        const item = await lane.blocking.blmoveBuffer(
          list,
          lane.ref.key,
          'RIGHT',
          'LEFT',
          this.#settings.blockSeconds,
        );
        if (item !== null) {
          lane.held++;
          lane.pending = 1; // more may have come with it
          this.#wake.fire();
        }
      } catch (error) {
        if (this.#closing) return;
        this.#noteList(lane, error);
        await sleep(1000);
      }
    }
  }

  async #beat(): Promise<void> {
    try {
      const dead = await this.#registry.beat(
        this.#lanes.filter((lane) => !lane.released).map((lane) => lane.ref),
      );
      if (dead.length > 0 && !this.#recovering && !this.#closing) {
        this.#recovering = this.#recover(dead).finally(() => {
          this.#recovering = null;
        });
      }
    } catch (error) {
      this.#notes.take('beat', messageOf(error)).log &&
        this.#log.error({ event: 'intake-error', err: messageOf(error) }, 'intake: beat failed');
    }
    // Lengths of lists that wait behind an earlier one (the steps read only the list they move).
    for (const lane of this.#lanes) {
      if (hasWork(lane) || this.#closing) continue;
      this.#queue.client.llen(lane.spec.list).then(
        (length) => {
          lane.length = length;
        },
        (error) => this.#noteList(lane, error),
      );
    }
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

  /** A list that cannot be read (a key of the wrong type): shown, and logged once a minute. */
  #noteList(lane: Lane, error: unknown): void {
    lane.length = null;
    this.#note(lane, 'cannot read the list', error);
  }

  #note(lane: Lane, what: string, error: unknown): void {
    const text = messageOf(error);
    lane.error = text;
    const { log, held } = this.#notes.take(lane.spec.list, text);
    if (!log) return;
    const { list } = lane.spec;
    const repeats = held > 0 ? { repeats: held } : {};
    this.#log.error(
      { event: 'intake-error', list, err: text, ...repeats },
      `intake: list ${list}: ${what}`,
    );
  }

  #clearNote(lane: Lane): void {
    if (lane.error === null) return;
    lane.error = null;
    this.#notes.clear(lane.spec.list);
  }
}
