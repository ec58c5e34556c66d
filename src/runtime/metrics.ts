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

// Microseconds, up to one day late, 3 significant digits.
const newHistogram = () =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 86_400_000_000,
    numberOfSignificantValueDigits: 3,
  });

export class LatenessHistogram {
  readonly #histogram = newHistogram();

  recordMs(ms: number): void {
    this.#histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  addEncoded(encoded: string): void {
    if (encoded) this.#histogram.add(hdr.decodeFromCompressedBase64(encoded));
  }

  encode(): string {
    return this.#histogram.totalCount === 0 ? '' : hdr.encodeIntoCompressedBase64(this.#histogram);
  }

  summary(): LatenessSummary {
    const h = this.#histogram;
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: h.totalCount,
      p50: ms(h.getValueAtPercentile(50)),
      p99: ms(h.getValueAtPercentile(99)),
      p999: ms(h.getValueAtPercentile(99.9)),
      max: ms(h.maxValue),
      mean: ms(h.mean),
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
