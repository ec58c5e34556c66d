// The sorted-set intake: members other programs ZADD to their own delay queue
// (`JOB_MESSAGE_QUEUE` in seconds, `seta` in ms) become skyq messages when they fall
// due on Redis's clock. Each step is one intake-zmove.lua call in the set's slot: it
// moves the due members, lowest score first, into the launcher's holding list and
// reads that list back; hand() then adds them under their positions' ids with their
// scores as due times, as the list intake does (holding.ts, transfer.ts, recovery.ts).
// An idle set costs nothing of its own: a step tells when its head falls due, and a
// timer waits for that; the launcher's watcher reads every idle set's head in the call
// it makes anyway (watch-many.lua) and pokes a lane whose set got an earlier member,
// at once where keyspace notifications announce the ZADD.
import type { Logger } from 'pino';
import { type HoldingRef, ownZsetHolding } from '../../queue/intake/holding.js';
import { hand } from '../../queue/intake/transfer.js';
import type { ZsetIntakeSpec } from '../../queue/intake/zset-spec.js';
import type { Queue } from '../../queue/queue.js';
import type { IntakeScripts } from '../../redis/intake-scripts.js';
import { later } from '../timers.js';
import type { WatchedZset } from '../watcher.js';
import { type IntakeListFigures, OncePerMinute, RateWindow } from './figures.js';
import { HALTED_RECHECK_MS, type IntakeHalt } from './halt.js';
import { Signal, sleep } from './signal.js';

/** What the watcher needs of one set (src/runtime/watcher.ts). */

interface Lane {
  spec: ZsetIntakeSpec;
  ref: HoldingRef;
  /** a step is wanted now (poked, its head fell due, or more is due than one step moved) */
  wanted: boolean;
  /** items in the holding list, as last read (1 at start: leftovers are read first) */
  held: number;
  /** the head's due time after the last step (Redis ms); Infinity when the set was empty */
  plannedAt: number;
  /** set while a failed step waits to be tried again: not watched meanwhile */
  failing: boolean;
  timer: NodeJS.Timeout | undefined;
  items: number;
  length: number | null;
  error: string | null;
  rate: RateWindow;
  meanBytes: number;
  /** its holding list was emptied and removed at close */
  released: boolean;
}

/** Bytes one step moves at most (at least one member, whatever its size). */
const STEP_BYTES = 4 * 1024 * 1024;
/** The longest a timer waits for a head: a far-off one is looked at again then. */
const LONGEST_WAIT_MS = 3_600_000;
/** How long a step that failed (a key of the wrong type, Redis away) waits to try again. */
const RETRY_MS = 1000;

const hasWork = (lane: Lane) => lane.wanted || lane.held > 0;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class ZsetLanes {
  readonly #queue: Queue;
  readonly #scripts: IntakeScripts;
  readonly #lanes: Lane[];
  readonly #log: Logger;
  readonly #batch: number;
  readonly #halt: IntakeHalt;
  readonly #notes = new OncePerMinute();
  readonly #wake = new Signal();
  /** without the watcher's reads, an idle lane looks this often itself (0: never) */
  #fallbackMs = 0;
  #watched: WatchedZset[] | null = null;
  #loop: Promise<void> | null = null;
  #closing = false;

  constructor(
    queue: Queue,
    scripts: IntakeScripts,
    specs: ZsetIntakeSpec[],
    launcherId: string,
    log: Logger,
    settings: { batch: number; halt: IntakeHalt },
  ) {
    this.#queue = queue;
    this.#scripts = scripts;
    this.#log = log;
    this.#batch = settings.batch;
    this.#halt = settings.halt;
    const prefix = queue.config.prefix;
    this.#lanes = specs.map((spec) => ({
      spec,
      ref: ownZsetHolding(prefix, launcherId, spec),
      wanted: true,
      held: 1,
      plannedAt: 0,
      failing: false,
      timer: undefined,
      items: 0,
      length: null,
      error: null,
      rate: new RateWindow(),
      meanBytes: 0,
      released: false,
    }));
  }

  /** The holding lists still registered (all but those emptied and removed at close). */
  refs(): HoldingRef[] {
    return this.#lanes.filter((lane) => !lane.released).map((lane) => lane.ref);
  }

  /** Starts moving. `fallbackMs`: how often an idle lane looks itself when nothing watches it. */
  start(fallbackMs: number): void {
    this.#fallbackMs = fallbackMs;
    this.#loop = this.#run();
  }

  /** The sets as the watcher reads them (the same objects each time). */
  watched(): WatchedZset[] {
    this.#watched ??= this.#lanes.map((lane) => ({
      key: lane.spec.key,
      unitMs: lane.spec.unitMs,
      plannedAt: () => (hasWork(lane) || lane.failing || this.#closing ? 0 : lane.plannedAt),
      seen: (headMs, size) => {
        if (headMs !== -2) lane.length = size;
        if (headMs !== -1 && headMs < lane.plannedAt) this.#poke(lane);
      },
      poke: () => this.#poke(lane),
    }));
    return this.#watched;
  }

  figures(): IntakeListFigures[] {
    return this.#lanes.map((lane) => ({
      list: lane.spec.key,
      scoreUnit: lane.spec.scoreUnit,
      group: lane.spec.group,
      priority: lane.spec.priority,
      length: lane.length,
      items: lane.items,
      rate: Math.round(lane.rate.rate(lane.items) * 10) / 10,
      error: lane.error,
    }));
  }

  /** Stops moving; what the holding lists hold is for the caller to drain (recovery.ts). */
  async stop(): Promise<void> {
    this.#closing = true;
    for (const lane of this.#lanes) clearTimeout(lane.timer);
    this.#wake.fire();
    await this.#loop;
  }

  /** After stop(): adds what each holding list holds (`drain`), and notes those now gone. */
  async drainAll(drain: (ref: HoldingRef) => Promise<number>): Promise<void> {
    for (const lane of this.#lanes) {
      try {
        lane.items += await drain(lane.ref);
        lane.released = (await this.#queue.client.exists(lane.ref.key)) === 0;
      } catch (error) {
        this.#note(lane, error, 'could not empty its holding list at stop');
      }
    }
  }

  #poke(lane: Lane): void {
    if (this.#closing || lane.failing) return;
    clearTimeout(lane.timer);
    lane.wanted = true;
    this.#wake.fire();
  }

  async #run(): Promise<void> {
    while (!this.#closing) {
      const lane = this.#lanes.find(hasWork);
      if (lane && this.#halt.halted) await sleep(HALTED_RECHECK_MS);
      else if (lane) await this.#step(lane);
      else await this.#wake.wait();
    }
  }

  /** One intake-zmove.lua call: moves what is due, then adds what the holding list holds. */
  async #step(lane: Lane): Promise<void> {
    const max = Math.max(
      1,
      Math.min(this.#batch, Math.floor(STEP_BYTES / Math.max(1, lane.meanBytes))),
    );
    const moves = Math.max(0, max - lane.held);
    const { ref } = lane;
    lane.wanted = false;
    try {
      const reply = (await this.#scripts.run(
        'zmove',
        [lane.spec.key, ref.key, ref.taken],
        [lane.spec.unitMs, moves, STEP_BYTES, max],
        true,
      )) as (number | Buffer)[];
      const [moved = 0, nextMs = -1, size = 0, now = 0, first = 0, held = 0] = reply
        .slice(0, 6)
        .map(Number);
      const items = reply.slice(6) as Buffer[];
      lane.length = size;
      lane.held = held;
      lane.plannedAt = nextMs < 0 ? Number.POSITIVE_INFINITY : nextMs;
      // More is due than this step moved: the next step follows at once.
      if (moved > 0 && nextMs >= 0 && nextMs <= now) lane.wanted = true;
      this.#clearNote(lane);
      if (items.length > 0) {
        const taken = { items, first, held, sourceLength: null, sourceError: null };
        // Not kept: another launcher adopted the holding list; the next step reads it afresh.
        if (await hand(this.#queue, this.#scripts, ref, taken)) lane.held -= items.length;
        lane.items += items.length;
        const bytes = items.reduce((sum, item) => sum + item.length, 0) / items.length;
        lane.meanBytes = lane.meanBytes === 0 ? bytes : (lane.meanBytes * 3 + bytes) / 4;
      }
      if (!hasWork(lane)) this.#arm(lane, nextMs - now);
    } catch (error) {
      this.#note(lane, error);
      lane.failing = true;
      lane.wanted = false;
      lane.held = 0;
      clearTimeout(lane.timer);
      if (this.#closing) return;
      lane.timer = later(() => {
        lane.failing = false;
        lane.held = 1; // read the holding list again: a failed add left its items there
        this.#poke(lane);
      }, RETRY_MS);
    }
  }

  /** Waits for the head to fall due (`inMs` on Redis's clock; < 0: empty, told when it fills). */
  #arm(lane: Lane, inMs: number): void {
    clearTimeout(lane.timer);
    if (this.#closing) return;
    const empty = lane.plannedAt === Number.POSITIVE_INFINITY;
    let wait = empty ? Number.POSITIVE_INFINITY : Math.min(Math.max(1, inMs), LONGEST_WAIT_MS);
    if (this.#fallbackMs > 0) wait = Math.min(wait, this.#fallbackMs);
    if (wait !== Number.POSITIVE_INFINITY) lane.timer = later(() => this.#poke(lane), wait);
  }

  /** A set that cannot be read (a key of the wrong type, …): shown, and logged once a minute. */
  #note(lane: Lane, error: unknown, what = 'cannot move members'): void {
    const text = messageOf(error);
    lane.error = text;
    lane.length = null;
    const { key } = lane.spec;
    const { log, held } = this.#notes.take(key, text);
    if (!log) return;
    const repeats = held > 0 ? { repeats: held } : {};
    this.#log.error(
      { event: 'intake-error', zset: key, err: text, ...repeats },
      `intake: sorted set ${key}: ${what}`,
    );
  }

  #clearNote(lane: Lane): void {
    if (lane.error === null) return;
    lane.error = null;
    this.#notes.clear(lane.spec.key);
  }
}
