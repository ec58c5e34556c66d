// Fixed log-linear buckets for durations (lateness, handler time, Redis round
// trips). Every histogram has the same bucket bounds, so merging is adding
// arrays, and an actor can record into shared memory that the coordinator reads
// without a message. Bounds are m × 10^e µs for m = 1.0, 1.1, … 9.9 and
// e = 0 … 7 (1 µs to 100 s): at most 10 % wide. Buckets hold [lower, upper),
// and every Prometheus bound we publish (1 ms, 2.5 ms, … 60 s) is a bucket
// bound, so the count below each of them is exact.

const PER_DECADE = 90;
const DECADES = 8;
/** bucket 0: below 1 µs (and early starts); last: 100 s and over */
export const BUCKETS = 2 + PER_DECADE * DECADES;
/** counts, then count, sum (ms) and max (ms) */
export const HISTOGRAM_SLOTS = BUCKETS + 3;
const COUNT = BUCKETS;
const SUM = BUCKETS + 1;
const MAX = BUCKETS + 2;

/** The bucket a duration in ms falls in. */
export function bucketOf(ms: number): number {
  const us = ms * 1000;
  if (!(us >= 1)) return 0; // also NaN and negative values
  const e = Math.floor(Math.log10(us));
  if (e >= DECADES) return BUCKETS - 1;
  // Rounding guards against 10^e landing a hair below a bound (log10 and pow are not exact).
  const sub = Math.floor(Math.round((us / 10 ** e) * 1e9) / 1e8) - 10;
  return 1 + e * PER_DECADE + Math.min(PER_DECADE - 1, Math.max(0, sub));
}

/** Upper bound of a bucket, in ms (Infinity for the last one). */
export function bucketUpperMs(bucket: number): number {
  if (bucket <= 0) return 0.001;
  if (bucket >= BUCKETS - 1) return Number.POSITIVE_INFINITY;
  const e = Math.floor((bucket - 1) / PER_DECADE);
  const sub = (bucket - 1) % PER_DECADE;
  return Math.round((11 + sub) * 10 ** e) / 10 / 1000; // (1 + (sub + 1) / 10) × 10^e µs
}

/** A histogram over a slice of a (possibly shared) Float64Array. */
export class Histogram {
  readonly #slots: Float64Array;

  constructor(slots: Float64Array = new Float64Array(HISTOGRAM_SLOTS)) {
    if (slots.length !== HISTOGRAM_SLOTS) throw new RangeError('histogram needs HISTOGRAM_SLOTS');
    this.#slots = slots;
  }

  record(ms: number): void {
    const slots = this.#slots;
    (slots[bucketOf(ms)] as number)++;
    (slots[COUNT] as number)++;
    const value = Math.max(ms, 0); // early starts count as 0 ms
    slots[SUM] = (slots[SUM] as number) + value;
    if (value > (slots[MAX] as number)) slots[MAX] = value;
  }

  data(): HistogramData {
    return histogramData(this.#slots);
  }

  /** Percentiles straight from the slots (no bucket list made). */
  summary(): Summary {
    return summarizeSlots(this.#slots);
  }

  /** Adds this histogram's slots into `into` (a dense merge: HISTOGRAM_SLOTS numbers). */
  addTo(into: Float64Array): void {
    const slots = this.#slots;
    for (let i = 0; i < BUCKETS; i++) (into[i] as number) += slots[i] as number;
    (into[COUNT] as number) += slots[COUNT] as number;
    (into[SUM] as number) += slots[SUM] as number;
    into[MAX] = Math.max(into[MAX] as number, slots[MAX] as number);
  }
}

/** summarize() over dense slots. */
export function summarizeSlots(slots: Float64Array): Summary {
  const count = slots[COUNT] as number;
  const maxMs = slots[MAX] as number;
  const at = (q: number): number => {
    if (count === 0) return 0;
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += slots[i] as number;
      if (seen >= rank) return Math.min(bucketUpperMs(i), maxMs);
    }
    return maxMs;
  };
  return rounded(count, at(0.5), at(0.99), at(0.999), maxMs, slots[SUM] as number);
}

function rounded(count: number, p50: number, p99: number, p999: number, max: number, sum: number) {
  const r = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    count,
    p50: r(p50),
    p99: r(p99),
    p999: r(p999),
    max: r(max),
    mean: count === 0 ? 0 : r(sum / count),
  };
}

/** A histogram as it travels (JSON, threads): only the buckets that hold something. */
/** A histogram's buckets and totals, as they travel between threads and processes. */
export interface HistogramData {
  /** values counted */
  count: number;
  /** their sum, in ms */
  sumMs: number;
  /** the largest, in ms */
  maxMs: number;
  /** bucket index, count, bucket index, count, … */
  buckets: number[];
}

export function histogramData(slots: Float64Array): HistogramData {
  const buckets: number[] = [];
  for (let i = 0; i < BUCKETS; i++) {
    const n = slots[i] as number;
    if (n > 0) buckets.push(i, n);
  }
  return {
    count: slots[COUNT] as number,
    sumMs: slots[SUM] as number,
    maxMs: slots[MAX] as number,
    buckets,
  };
}

export const emptyHistogram = (): HistogramData => ({ count: 0, sumMs: 0, maxMs: 0, buckets: [] });

export function mergeHistograms(parts: HistogramData[]): HistogramData {
  const counts = new Map<number, number>();
  const out = emptyHistogram();
  for (const part of parts) {
    out.count += part.count;
    out.sumMs += part.sumMs;
    out.maxMs = Math.max(out.maxMs, part.maxMs);
    for (let i = 0; i < part.buckets.length; i += 2) {
      const bucket = part.buckets[i] as number;
      counts.set(bucket, (counts.get(bucket) ?? 0) + (part.buckets[i + 1] as number));
    }
  }
  out.buckets = [...counts].sort((a, b) => a[0] - b[0]).flat();
  return out;
}

/** A histogram's percentiles, in ms. */
export interface Summary {
  /** values counted (0: the figures are 0 and mean nothing) */
  count: number;
  /** median */
  p50: number;
  /** 99th percentile */
  p99: number;
  /** 99.9th percentile */
  p999: number;
  /** the largest */
  max: number;
  /** the mean */
  mean: number;
}

/** Percentiles in ms: the upper bound of the bucket holding them, never above the max seen. */
export function summarize(data: HistogramData): Summary {
  const at = (q: number): number => {
    if (data.count === 0) return 0;
    const rank = Math.ceil(q * data.count);
    let seen = 0;
    for (let i = 0; i < data.buckets.length; i += 2) {
      seen += data.buckets[i + 1] as number;
      if (seen >= rank) return Math.min(bucketUpperMs(data.buckets[i] as number), data.maxMs);
    }
    return data.maxMs;
  };
  return rounded(data.count, at(0.5), at(0.99), at(0.999), data.maxMs, data.sumMs);
}

/** Cumulative counts at each upper bound (ms), as Prometheus `le` buckets want them. */
export function cumulativeCounts(data: HistogramData, boundsMs: readonly number[]): number[] {
  const out = boundsMs.map(() => 0);
  for (let i = 0; i < data.buckets.length; i += 2) {
    const upper = bucketUpperMs(data.buckets[i] as number);
    const n = data.buckets[i + 1] as number;
    for (let b = 0; b < boundsMs.length; b++) {
      if (upper <= (boundsMs[b] as number) + 1e-9) out[b] = (out[b] as number) + n;
    }
  }
  return out;
}
