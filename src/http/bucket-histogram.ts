// A Prometheus histogram whose buckets are already counted: the runtime records every duration
// once, into its shared log-linear histograms (src/runtime/histogram.ts), and this metric only
// reads them out at Prometheus bounds. Re-observing each value into a prom-client Histogram
// would count everything twice and cost a call per message.
import type { Metric } from 'prom-client';
import { cumulativeCounts, type HistogramData } from '../runtime/histogram.js';

export interface LabelledHistogram {
  labels: Record<string, string>;
  data: HistogramData;
}

interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * Registered with a prom-client Registry, which only calls `get()` (and `reset()` on reset):
 * the duck-typed shape of prom-client's own metrics, as its docs allow for custom collectors.
 */
export class BucketHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly #boundsSeconds: readonly number[];
  readonly #boundsMs: number[];
  readonly #read: () => LabelledHistogram[];

  constructor(
    name: string,
    help: string,
    boundsSeconds: readonly number[],
    read: () => LabelledHistogram[],
  ) {
    this.name = name;
    this.help = help;
    this.#boundsSeconds = boundsSeconds;
    this.#boundsMs = boundsSeconds.map((s) => s * 1000);
    this.#read = read;
  }

  async get(): Promise<{ name: string; help: string; type: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, data } of this.#read()) {
      const counts = cumulativeCounts(data, this.#boundsMs);
      this.#boundsSeconds.forEach((le, i) => {
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { ...labels, le },
          value: counts[i] as number,
        });
      });
      values.push({
        metricName: `${this.name}_bucket`,
        labels: { ...labels, le: '+Inf' },
        value: data.count,
      });
      values.push({ metricName: `${this.name}_sum`, labels, value: data.sumMs / 1000 });
      values.push({ metricName: `${this.name}_count`, labels, value: data.count });
    }
    return { name: this.name, help: this.help, type: this.type, values };
  }

  reset(): void {
    // Nothing to reset: the figures live in the runtime.
  }

  /** prom-client's registerMetric is typed for its own classes only. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}
