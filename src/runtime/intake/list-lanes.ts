// The list intake: moves items that other programs LPUSH onto classic Redis lists into
// skyq's groups, as a BRPOP consumer of those lists would take them. One loop
// takes from the first list (in the order given) that has items, so an earlier
// list wins while it has any, exactly like `BRPOP high normal low`. While a list
// looks empty, a connection of its own blocks in Redis on it (BLMOVE with a
// timeout, into the holding list): an item pushed onto an idle list is moved the
// moment it arrives, and an idle intake sends nothing but those blocking calls.
// Every move goes through the launcher's holding list (src/queue/intake/transfer.ts).
import type { Logger } from 'pino';
import type { QueueOptions } from '../../queue/config.js';
import { type HoldingRef, ownHolding } from '../../queue/intake/holding.js';
import type { IntakeSpec } from '../../queue/intake/spec.js';
import { hand, take } from '../../queue/intake/transfer.js';
import type { Queue } from '../../queue/queue.js';
import { connect, type RedisClient } from '../../redis/connection.js';
import type { IntakeScripts } from '../../redis/intake-scripts.js';
import { type IntakeListFigures, OncePerMinute, RateWindow } from './figures.js';
import { HALTED_RECHECK_MS, type IntakeHalt } from './halt.js';
import { Signal, sleep } from './signal.js';

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

export class ListLanes {
  readonly #queue: Queue;
  readonly #scripts: IntakeScripts;
  readonly #lanes: Lane[];
  readonly #log: Logger;
  readonly #settings: { batch: number; blockSeconds: number; halt: IntakeHalt };
  readonly #notes = new OncePerMinute();
  readonly #wake = new Signal();
  #loop: Promise<void> | null = null;
  #blockers: Promise<void>[] = [];
  #closing = false;

  constructor(
    queue: Queue,
    where: QueueOptions,
    scripts: IntakeScripts,
    specs: IntakeSpec[],
    launcherId: string,
    log: Logger,
    settings: { batch: number; blockSeconds: number; halt: IntakeHalt },
  ) {
    this.#queue = queue;
    this.#scripts = scripts;
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

  /** The holding lists still registered (all but those emptied and removed at close). */
  refs(): HoldingRef[] {
    return this.#lanes.filter((lane) => !lane.released).map((lane) => lane.ref);
  }

  start(): void {
    this.#loop = this.#run();
    this.#blockers = this.#lanes.map((lane) => this.#block(lane));
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

  /** Stops moving: the loop ends, and every blocked BLMOVE with its connection. */
  async stop(): Promise<void> {
    this.#closing = true;
    this.#wake.fire();
    for (const lane of this.#lanes) lane.idle.fire();
    await this.#loop;
    // A blocked BLMOVE ends with its connection. One Redis served just before it saw the
    // close has put its item in the holding list: the drain at close adds it, or, when it
    // came later still, the list is not removed and is adopted later.
    for (const lane of this.#lanes) lane.blocking.disconnect();
    await Promise.all(this.#blockers);
  }

  /** After stop(): adds what each holding list holds (`drain`), and notes those now gone. */
  async drainAll(drain: (ref: HoldingRef) => Promise<number>): Promise<void> {
    for (const lane of this.#lanes) {
      try {
        lane.items += await drain(lane.ref);
        lane.released = (await this.#queue.client.exists(lane.ref.key)) === 0;
      } catch (error) {
        this.#note(lane, 'could not empty its holding list at stop', error);
      }
    }
  }

  /** Lengths of lists that wait behind an earlier one (the steps read only the list they move). */
  refreshLengths(): void {
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

  async #run(): Promise<void> {
    while (!this.#closing) {
      if (this.#settings.halt.halted) {
        await sleep(HALTED_RECHECK_MS);
        continue;
      }
      const lane = this.#lanes.find(hasWork);
      if (!lane) {
        await this.#wake.wait();
        continue;
      }
      if (await this.#earlierHasItems(lane)) continue;
      await this.#step(lane);
      if (!hasWork(lane)) lane.idle.fire();
    }
  }

  /**
   * Whether a list before `lane` (in its group) has items after all: the estimates are a step
   * old, and a list found empty may have filled before its own BLMOVE went back to wait, while
   * a later list's wait moved an item at once. BRPOP would take the earlier list's items first,
   * so they go first: each is read (LLEN) before a later list's items are handed on.
   */
  async #earlierHasItems(lane: Lane): Promise<boolean> {
    const earlier = this.#lanes
      .slice(0, this.#lanes.indexOf(lane))
      .filter((other) => other.spec.group === lane.spec.group);
    if (earlier.length === 0) return false;
    const lengths = await Promise.all(
      earlier.map((other) =>
        this.#queue.client.llen(other.spec.list).catch((error: unknown) => {
          this.#noteList(other, error);
          return 0;
        }),
      ),
    );
    let found = false;
    earlier.forEach((other, i) => {
      const length = lengths[i] ?? 0;
      if (length > 0) {
        other.pending = length;
        found = true;
      }
    });
    return found;
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
      if (this.#settings.halt.halted) {
        await sleep(HALTED_RECHECK_MS);
        continue;
      }
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
