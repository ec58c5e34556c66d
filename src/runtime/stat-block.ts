// An actor's live figures in a SharedArrayBuffer: the actor writes counters,
// its state and three histograms as it works; the coordinator (and through it
// stats(), /metrics and the dashboard) reads them whenever it likes. No message
// is sent per reading, so a busy actor never shows as TIMEOUT and an idle one
// costs nothing to watch. One writer per block: plain stores are enough.
import {
  emptyHistogram,
  HISTOGRAM_SLOTS,
  Histogram,
  type HistogramData,
  histogramData,
  type Summary,
  summarizeSlots,
} from './histogram.js';
import { mergeNameFigures, NAME_STATS_BYTES, type NameFigure, NameStats } from './name-stats.js';

/** The modes of actor-modes.ts; a new one goes at the end (the block stores the index). */
export const ACTOR_STATES = [
  'starting',
  'running',
  'paused',
  'draining',
  'stopped',
  'halted',
] as const;
/** One of ACTOR_STATES. */
export type ActorState = (typeof ACTOR_STATES)[number];

/** An actor's counters, each counting up from its start. */
export interface Counters {
  /** leased by this actor */
  claimed: number;
  /** handler succeeded and the ack went out */
  done: number;
  /** handler threw, rejected or timed out */
  failed: number;
  /** failures that went back to wait for another attempt */
  retried: number;
  /** dead-lettered by this actor (failed last attempt, unreadable record) */
  dead: number;
  /** ack/fail/extend refused: the lease had passed to another consumer */
  stale: number;
  /** running or waiting for their due time right now */
  inFlight: number;
  /** set aside by a claim for a per-name rate limit (unleased, no attempt counted) */
  heldBack: number;
}
/** The name of one of the Counters. */
export type CounterName = keyof Counters;
/** The counters, in the order they sit in an actor's shared block. */
export const COUNTER_NAMES = [
  'claimed',
  'done',
  'failed',
  'retried',
  'dead',
  'stale',
  'inFlight',
  'heldBack',
] as const satisfies readonly CounterName[];

/** An actor's histograms: lateness (start − due), handler duration, Redis round trips. */
export const HISTOGRAM_NAMES = ['lateness', 'handler', 'redisRtt'] as const;
/** One of HISTOGRAM_NAMES. */
export type HistogramName = (typeof HISTOGRAM_NAMES)[number];

const STATE = 0;
const STARTED_AT = 1;
const ERROR_LENGTH = 2;
const PLANNED_AT = 3;
const ALIVE_AT = 4;
const COUNTERS = 5;
const HISTOGRAMS = COUNTERS + COUNTER_NAMES.length;
const SLOTS = HISTOGRAMS + HISTOGRAM_NAMES.length * HISTOGRAM_SLOTS;
/** the last error's text, UTF-16, cut to this many code units */
const ERROR_CHARS = 300;
const NAMES_AT =
  SLOTS * Float64Array.BYTES_PER_ELEMENT + ERROR_CHARS * Uint16Array.BYTES_PER_ELEMENT;
const BYTES = NAMES_AT + NAME_STATS_BYTES;
/** each counter's slot: counting is on the hot path */
const SLOT_OF = Object.fromEntries(COUNTER_NAMES.map((name, i) => [name, COUNTERS + i])) as Record<
  CounterName,
  number
>;

/** What a block holds at one moment. */
export interface BlockFigures extends Counters {
  /** the actor's state */
  state: ActorState;
  /** when its thread started (epoch ms) */
  startedAt: number;
  /** the last error the actor noted (poll failed, Redis unreachable, …) */
  lastError: string | null;
  /** the buckets themselves (empty lists when they were not asked for) */
  histograms: Record<HistogramName, HistogramData>;
  /** percentiles of each histogram, in ms */
  summary: Record<HistogramName, Summary>;
  /** per job name (named jobs only; bounded: see name-stats.ts) */
  names: NameFigure[];
}

const noBuckets = (): Record<HistogramName, HistogramData> => ({
  lateness: emptyHistogram(),
  handler: emptyHistogram(),
  redisRtt: emptyHistogram(),
});

export class StatBlock {
  readonly buffer: SharedArrayBuffer;
  readonly #slots: Float64Array;
  readonly #errorText: Uint16Array;
  /** handler start − due time (ms, Redis clock) */
  readonly lateness: Histogram;
  /** handler start → settled (ms) */
  readonly handler: Histogram;
  /** claim round trips (ms) */
  readonly redisRtt: Histogram;
  /** named jobs' figures, per name */
  readonly names: NameStats;

  constructor(buffer = new SharedArrayBuffer(BYTES)) {
    this.buffer = buffer;
    this.#slots = new Float64Array(buffer, 0, SLOTS);
    this.#errorText = new Uint16Array(buffer, SLOTS * Float64Array.BYTES_PER_ELEMENT, ERROR_CHARS);
    const view = (i: number) =>
      new Histogram(
        this.#slots.subarray(
          HISTOGRAMS + i * HISTOGRAM_SLOTS,
          HISTOGRAMS + (i + 1) * HISTOGRAM_SLOTS,
        ),
      );
    this.lateness = view(0);
    this.handler = view(1);
    this.redisRtt = view(2);
    this.names = new NameStats(buffer, NAMES_AT);
  }

  add(counter: CounterName, n = 1): void {
    (this.#slots[SLOT_OF[counter]] as number) += n;
  }

  set(counter: CounterName, value: number): void {
    this.#slots[SLOT_OF[counter]] = value;
  }

  get(counter: CounterName): number {
    return this.#slots[SLOT_OF[counter]] as number;
  }

  get state(): ActorState {
    return ACTOR_STATES[this.#slots[STATE] as number] ?? 'starting';
  }

  set state(state: ActorState) {
    this.#slots[STATE] = ACTOR_STATES.indexOf(state);
  }

  get startedAt(): number {
    return this.#slots[STARTED_AT] as number;
  }

  set startedAt(ms: number) {
    this.#slots[STARTED_AT] = ms;
  }

  /** When the actor will look at its group anyway (Redis ms); 0 while it works or polls. */
  get plannedAt(): number {
    return this.#slots[PLANNED_AT] as number;
  }

  set plannedAt(ms: number) {
    this.#slots[PLANNED_AT] = ms;
  }

  /**
   * The actor's heartbeat: it calls beat() on a timer of its own event loop (actor-rounds.ts),
   * and its supervisor reads how long ago that was (hang-watch.ts). On the process's monotonic
   * clock, which every thread shares (each thread's performance.now() has its own origin).
   */
  beat(): void {
    this.#slots[ALIVE_AT] = monotonicMs();
  }

  /** When the actor last beat (monotonicMs()); 0 before its first beat. */
  get aliveAt(): number {
    return this.#slots[ALIVE_AT] as number;
  }

  get lastError(): string | null {
    const length = this.#slots[ERROR_LENGTH] as number;
    return length === 0 ? null : String.fromCharCode(...this.#errorText.subarray(0, length));
  }

  set lastError(text: string | null) {
    const cut = (text ?? '').slice(0, ERROR_CHARS);
    for (let i = 0; i < cut.length; i++) this.#errorText[i] = cut.charCodeAt(i);
    this.#slots[ERROR_LENGTH] = cut.length;
  }

  counters(): Counters {
    return Object.fromEntries(
      COUNTER_NAMES.map((name) => [name, this.get(name)]),
    ) as unknown as Counters;
  }

  histogram(name: HistogramName): Histogram {
    return this[name];
  }

  /** The block now; bucket lists only when asked (summaries are read straight from memory). */
  figures(buckets = true): BlockFigures {
    return {
      ...this.counters(),
      state: this.state,
      startedAt: this.startedAt,
      lastError: this.lastError,
      histograms: buckets
        ? {
            lateness: this.lateness.data(),
            handler: this.handler.data(),
            redisRtt: this.redisRtt.data(),
          }
        : noBuckets(),
      summary: {
        lateness: this.lateness.summary(),
        handler: this.handler.summary(),
        redisRtt: this.redisRtt.summary(),
      },
      names: this.names.figures(buckets),
    };
  }
}

/** Milliseconds on the process's monotonic clock, the same in every thread. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000n) / 1000;
}

/**
 * Counters added up and histograms merged over several blocks (a launcher's totals).
 * `histogramBuckets`: the merged histograms' own buckets, even when `buckets` leaves the
 * per-name ones out (what a launcher publishes: see registry.ts).
 */
export function totalFigures(
  blocks: StatBlock[],
  buckets = true,
  histogramBuckets = buckets,
): Counters & Pick<BlockFigures, 'histograms' | 'summary' | 'names'> {
  const counters = Object.fromEntries(
    COUNTER_NAMES.map((name) => [name, blocks.reduce((sum, block) => sum + block.get(name), 0)]),
  ) as unknown as Counters;
  const merged = (name: HistogramName) => {
    const into = new Float64Array(HISTOGRAM_SLOTS);
    for (const block of blocks) block.histogram(name).addTo(into);
    return into;
  };
  const lateness = merged('lateness');
  const handler = merged('handler');
  const redisRtt = merged('redisRtt');
  return {
    ...counters,
    histograms: histogramBuckets
      ? {
          lateness: histogramData(lateness),
          handler: histogramData(handler),
          redisRtt: histogramData(redisRtt),
        }
      : noBuckets(),
    summary: {
      lateness: summarizeSlots(lateness),
      handler: summarizeSlots(handler),
      redisRtt: summarizeSlots(redisRtt),
    },
    names: mergeNameFigures(
      blocks.map((block) => block.names.figures(buckets)),
      buckets,
    ),
  };
}
