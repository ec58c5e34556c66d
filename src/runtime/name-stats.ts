// Per job name figures (done, failed, handler duration), in a slice of the actor's shared stat
// block so the coordinator reads them without a message, as it reads the rest. The first
// MAX_NAMES names an actor sees get a slot each; any later name shares the slot OTHER_NAME, so
// the figures (and the `name` label of /metrics) stay bounded whatever names producers use.
// Unnamed jobs are not counted here: the actor's own counters hold everything.
// Memory: the slots are zero until used, and a SharedArrayBuffer's untouched pages cost nothing.
import {
  HISTOGRAM_SLOTS,
  Histogram,
  type HistogramData,
  histogramData,
  mergeHistograms,
  type Summary,
  summarize,
  summarizeSlots,
} from './histogram.js';

export const MAX_NAMES = 100;
/** The label value shared by every name past the first MAX_NAMES. */
export const OTHER_NAME = 'other';
const NAME_CHARS = 128;

// Layout (Float64 slots): [names used], then per slot: [name length, done, failed, histogram…];
// after the numbers, per slot NAME_CHARS UTF-16 code units of its name.
const SLOTS_PER_NAME = 3 + HISTOGRAM_SLOTS;
const NAME_SLOTS = MAX_NAMES + 1;
const NUMBERS = 1 + NAME_SLOTS * SLOTS_PER_NAME;
export const NAME_STATS_BYTES =
  NUMBERS * Float64Array.BYTES_PER_ELEMENT +
  NAME_SLOTS * NAME_CHARS * Uint16Array.BYTES_PER_ELEMENT;

/** The figures of one job name (named jobs only). */
export interface NameFigure {
  /** the job name (past the first 100 names, 'other') */
  name: string;
  /** jobs of that name done */
  done: number;
  /** jobs of that name that failed an attempt */
  failed: number;
  /** handler duration, ms */
  summary: Summary;
  /** the buckets (empty when not asked for) */
  histogram: HistogramData;
}

export class NameStats {
  readonly #numbers: Float64Array;
  readonly #text: Uint16Array;
  /** the writer's (the actor's) index of names to slots */
  readonly #slotOf = new Map<string, number>();
  readonly #histograms: Histogram[] = [];
  #otherWritten = false;

  /** A view of `buffer` from `offset` (bytes, a multiple of 8), NAME_STATS_BYTES long. */
  constructor(buffer: SharedArrayBuffer, offset: number) {
    this.#numbers = new Float64Array(buffer, offset, NUMBERS);
    this.#text = new Uint16Array(
      buffer,
      offset + NUMBERS * Float64Array.BYTES_PER_ELEMENT,
      NAME_SLOTS * NAME_CHARS,
    );
  }

  /** Counts one handler run of a named job. */
  record(name: string, ms: number, failed: boolean): void {
    const slot = this.#slot(name);
    const base = 1 + slot * SLOTS_PER_NAME;
    (this.#numbers[base + (failed ? 2 : 1)] as number)++;
    let histogram = this.#histograms[slot];
    if (!histogram) {
      histogram = new Histogram(this.#numbers.subarray(base + 3, base + SLOTS_PER_NAME));
      this.#histograms[slot] = histogram;
    }
    histogram.record(ms);
  }

  #slot(name: string): number {
    const known = this.#slotOf.get(name);
    if (known !== undefined) return known;
    const used = this.#numbers[0] as number;
    if (used >= MAX_NAMES) {
      if (!this.#otherWritten) this.#write(MAX_NAMES, OTHER_NAME);
      this.#otherWritten = true;
      return MAX_NAMES;
    }
    this.#write(used, name);
    this.#slotOf.set(name, used);
    this.#numbers[0] = used + 1;
    return used;
  }

  #write(slot: number, name: string): void {
    const text = name.slice(0, NAME_CHARS);
    for (let i = 0; i < text.length; i++) this.#text[slot * NAME_CHARS + i] = text.charCodeAt(i);
    // The length last: a reader never sees a name half written.
    this.#numbers[1 + slot * SLOTS_PER_NAME] = text.length;
  }

  /** Every name with figures, in the order first seen ('other' last). */
  figures(buckets = true): NameFigure[] {
    const out: NameFigure[] = [];
    for (let slot = 0; slot < NAME_SLOTS; slot++) {
      const base = 1 + slot * SLOTS_PER_NAME;
      const length = this.#numbers[base] as number;
      if (!length) continue;
      const start = slot * NAME_CHARS;
      const histogramSlots = this.#numbers.subarray(base + 3, base + SLOTS_PER_NAME);
      out.push({
        name: String.fromCharCode(...this.#text.subarray(start, start + length)),
        done: this.#numbers[base + 1] as number,
        failed: this.#numbers[base + 2] as number,
        summary: summarizeSlots(histogramSlots),
        histogram: buckets ? histogramData(histogramSlots) : emptyData(),
      });
    }
    return out;
  }
}

const emptyData = (): HistogramData => ({ count: 0, sumMs: 0, maxMs: 0, buckets: [] });

/**
 * Several actors' name figures added up by name. Past MAX_NAMES names in all, the rest join
 * 'other', so a launcher's label values stay bounded too.
 */
export function mergeNameFigures(lists: NameFigure[][], buckets = true): NameFigure[] {
  const byName = new Map<string, NameFigure[]>();
  for (const list of lists) {
    for (const figure of list) {
      const known = byName.has(figure.name) || byName.size < MAX_NAMES;
      const name = known ? figure.name : OTHER_NAME;
      const parts = byName.get(name) ?? [];
      parts.push(figure);
      byName.set(name, parts);
    }
  }
  return [...byName].map(([name, parts]) => {
    const histogram = mergeHistograms(parts.map((p) => p.histogram));
    const done = parts.reduce((sum, p) => sum + p.done, 0);
    const failed = parts.reduce((sum, p) => sum + p.failed, 0);
    // Without buckets the percentiles cannot be merged exactly: the slowest part's stand.
    const summary = buckets ? summarize(histogram) : slowest(parts.map((p) => p.summary));
    return { name, done, failed, summary, histogram };
  });
}

function slowest(summaries: Summary[]): Summary {
  return summaries.reduce((a, b) => ({ ...(b.p99 > a.p99 ? b : a), count: a.count + b.count }));
}

/**
 * An actor's histogram less its named jobs' (what its unnamed jobs took), so a series per name
 * plus one without adds up to the actor's total. The max stays the actor's: it cannot be split.
 */
export function unnamedPart(total: HistogramData, names: NameFigure[]): HistogramData {
  if (names.length === 0) return total;
  const counts = new Map<number, number>();
  for (let i = 0; i < total.buckets.length; i += 2) {
    counts.set(total.buckets[i] as number, total.buckets[i + 1] as number);
  }
  let count = total.count;
  let sumMs = total.sumMs;
  for (const { histogram } of names) {
    count -= histogram.count;
    sumMs -= histogram.sumMs;
    for (let i = 0; i < histogram.buckets.length; i += 2) {
      const bucket = histogram.buckets[i] as number;
      counts.set(bucket, (counts.get(bucket) ?? 0) - (histogram.buckets[i + 1] as number));
    }
  }
  const buckets = [...counts]
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[0] - b[0])
    .flat();
  return { count: Math.max(0, count), sumMs: Math.max(0, sumMs), maxMs: total.maxMs, buckets };
}
