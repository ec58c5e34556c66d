// Per-actor counters and a lateness histogram (handler start − due time).
// Histograms travel between threads encoded, so the coordinator can merge them.
import * as hdr from 'hdr-histogram-js';

export interface LatenessSummary {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export interface Counters {
  claimed: number;
  done: number;
  failed: number;
  retried: number;
  dead: number;
  inFlight: number;
}

export interface ActorStat extends Counters {
  group: number;
  threadId: number;
  state: 'starting' | 'running' | 'draining' | 'stopped';
  startedAt: number;
  lastError: string | null;
  lateness: LatenessSummary;
  /** the lateness histogram, encoded for merging */
  histogram: string;
}

// Microseconds, 3 significant digits; the histogram grows to whatever it sees.
const newHistogram = () =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 2,
    autoResize: true,
    numberOfSignificantValueDigits: 3,
  });

export class LatenessHistogram {
  readonly #histogram = newHistogram();
  // The histogram's own mean walks every bucket: keep the sum instead.
  #sumUs = 0;

  recordMs(ms: number): void {
    const us = Math.max(1, Math.round(ms * 1000));
    this.#histogram.recordValue(us);
    this.#sumUs += us;
  }

  addEncoded(encoded: string): void {
    if (!encoded) return;
    const other = hdr.decodeFromCompressedBase64(encoded);
    this.#histogram.add(other);
    this.#sumUs += other.mean * other.totalCount;
  }

  encode(): string {
    return this.#histogram.totalCount === 0 ? '' : hdr.encodeIntoCompressedBase64(this.#histogram);
  }

  summary(): LatenessSummary {
    const count = this.#histogram.totalCount;
    // One pass over the buckets for every percentile (getValueAtPercentile walks them each time).
    const s = this.#histogram.summary;
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count,
      p50: ms(s.p50),
      p99: ms(s.p99),
      p999: ms(s.p99_9),
      max: ms(s.max),
      mean: count === 0 ? 0 : ms(this.#sumUs / count),
    };
  }
}

export function emptyCounters(): Counters {
  return { claimed: 0, done: 0, failed: 0, retried: 0, dead: 0, inFlight: 0 };
}

export function addCounters(into: Counters, from: Counters): Counters {
  for (const name of Object.keys(into) as (keyof Counters)[]) into[name] += from[name];
  return into;
}
