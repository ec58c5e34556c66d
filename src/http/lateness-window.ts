// Lateness over the last sampling interval, not since start: the runtime's histograms only grow,
// so the difference of two readings is the histogram of what ran in between. A launcher read in
// this process has its buckets (exact p50/p99); one read from Redis has summaries only, which
// still give the interval's mean. A reading that finds every launcher's figures as they were
// (the stand-alone dashboard read the same publish twice: see throughput-window.ts) says
// nothing new, and keeps the last interval's figures instead of breaking the line.
import {
  emptyHistogram,
  type HistogramData,
  mergeHistograms,
  summarize,
} from '../runtime/histogram.js';
import type { LauncherStats } from '../runtime/launcher-stats.js';

export interface WindowLateness {
  /** ms; null when nothing ran in the interval or only summaries were known */
  p50: number | null;
  p99: number | null;
  /** ms; null when nothing ran in the interval */
  mean: number | null;
}

interface Reading {
  /** when the launcher took these figures (its clock) */
  at: number;
  count: number;
  sumMs: number;
  histogram: HistogramData | null;
}

export class LatenessWindow {
  #last = new Map<string, Reading>();
  #previous: WindowLateness = { p50: null, p99: null, mean: null };

  next(launchers: LauncherStats[]): WindowLateness {
    const unchanged =
      launchers.length > 0 &&
      launchers.every(
        ({ launcherId, at }) => at !== undefined && this.#last.get(launcherId)?.at === at,
      );
    if (unchanged) return this.#previous;
    this.#previous = this.#interval(launchers);
    return this.#previous;
  }

  #interval(launchers: LauncherStats[]): WindowLateness {
    const now = new Map<string, Reading>();
    const parts: HistogramData[] = [];
    let count = 0;
    let sumMs = 0;
    let allBuckets = true;
    for (const launcher of launchers) {
      const reading = readingOf(launcher);
      now.set(launcher.launcherId, reading);
      const before = this.#last.get(launcher.launcherId);
      // A launcher seen for the first time (or whose figures went back): all it has is new.
      const fresh = !before || before.count > reading.count;
      count += reading.count - (fresh ? 0 : before.count);
      sumMs += reading.sumMs - (fresh ? 0 : before.sumMs);
      if (!reading.histogram) allBuckets = false;
      else parts.push(fresh ? reading.histogram : subtract(reading.histogram, before.histogram));
    }
    const first = this.#last.size === 0;
    this.#last = now;
    // The first reading holds everything since start: it says nothing about this interval.
    if (first || count <= 0) return { p50: null, p99: null, mean: null };
    const mean = Math.round((sumMs / count) * 1000) / 1000;
    if (!allBuckets) return { p50: null, p99: null, mean };
    const summary = summarize(mergeHistograms(parts));
    return { p50: summary.p50, p99: summary.p99, mean };
  }
}

function readingOf(launcher: LauncherStats): Reading {
  const histogram = launcher.totals.histograms.lateness;
  const summary = launcher.totals.summary.lateness;
  // Figures published to Redis keep the summary and drop the buckets.
  if (
    histogram.count === summary.count &&
    (histogram.count === 0 || histogram.buckets.length > 0)
  ) {
    return { at: launcher.at, count: histogram.count, sumMs: histogram.sumMs, histogram };
  }
  return {
    at: launcher.at,
    count: summary.count,
    sumMs: summary.mean * summary.count,
    histogram: null,
  };
}

function subtract(now: HistogramData, before: HistogramData | null): HistogramData {
  if (!before) return now;
  const earlier = new Map<number, number>();
  for (let i = 0; i < before.buckets.length; i += 2) {
    earlier.set(before.buckets[i] as number, before.buckets[i + 1] as number);
  }
  const out = emptyHistogram();
  out.count = now.count - before.count;
  out.sumMs = now.sumMs - before.sumMs;
  out.maxMs = now.maxMs;
  for (let i = 0; i < now.buckets.length; i += 2) {
    const bucket = now.buckets[i] as number;
    const n = (now.buckets[i + 1] as number) - (earlier.get(bucket) ?? 0);
    if (n > 0) out.buckets.push(bucket, n);
  }
  return out;
}
