// /metrics: the launcher's figures in the Prometheus text format, made by a prom-client
// Registry. Nothing is observed here: each scrape reads launcher.stats() (the actors' shared
// stat blocks, through the coordinator) and the group depths once, and every series is filled
// from that one reading. The stand-alone dashboard serves the same series from the figures
// every launcher publishes to Redis, with a `launcher` label on each launcher's series (two
// launchers both run a group's actor); its histograms are each launcher's totals, the only
// buckets a launcher publishes.
import { Counter, Gauge, Registry } from 'prom-client';
import type { GroupCounts } from '../queue/queue.js';
import type { BucketState } from '../queue/ratelimit/buckets.js';
import type { ActorView, LauncherStats } from '../runtime/launcher-stats.js';
import { unnamedPart } from '../runtime/name-stats.js';
import type { ServerState } from '../runtime/server-checks.js';
import { ACTOR_STATES } from '../runtime/stat-block.js';
import { BucketHistogram } from './bucket-histogram.js';
import { defineLauncherSeries, launchersOf } from './launcher-series.js';
import { ACTOR_COUNTERS, DEPTHS, DURATION_BOUNDS_SECONDS, HISTOGRAMS } from './metric-families.js';

export { DURATION_BOUNDS_SECONDS } from './metric-families.js';

export interface MetricsInput {
  /** one launcher's figures; or, with `perLauncher`, those of every launcher publishing */
  stats: LauncherStats | LauncherStats[];
  /** null when Redis could not be read in time */
  counts: GroupCounts[] | null;
  /** each Redis server's eviction policy and clock skew, as last checked */
  servers?: ServerState[];
  /** the rate-limit buckets in use (null when Redis could not be read in time) */
  limits?: BucketState[] | null;
}

export type Set = (labels: Record<string, string>, value: number) => void;
export type Fill = (set: Set, input: MetricsInput) => void;
export type Labels = Record<string, string>;

export interface MetricsShape {
  /** label each launcher's series with `launcher` (the stand-alone dashboard) */
  perLauncher?: boolean;
  /** the groups `skyq_group_up` covers when per launcher (else: the launcher's actors) */
  groups?: number;
}

export class MetricsExporter {
  readonly registry = new Registry();
  readonly #read: () => Promise<MetricsInput>;
  #input: MetricsInput | null = null;
  #rendering: Promise<string> | null = null;

  readonly #shape: MetricsShape;

  constructor(read: () => Promise<MetricsInput>, shape: MetricsShape = {}) {
    this.#read = read;
    this.#shape = shape;
    this.#define();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Scrapes that arrive while one is being made share its text. */
  render(): Promise<string> {
    this.#rendering ??= this.#render().finally(() => {
      this.#rendering = null;
    });
    return this.#rendering;
  }

  async #render(): Promise<string> {
    this.#input = await this.#read();
    return this.registry.metrics();
  }

  #define(): void {
    const group = (view: { group: number }) => ({ group: String(view.group) });
    const perLauncher = this.#shape.perLauncher === true;
    const by = (launcher: LauncherStats): Labels =>
      perLauncher ? { launcher: launcher.launcherId } : {};
    const withLauncher = (names: string[]) => (perLauncher ? ['launcher', ...names] : names);
    const counts = (fill: (c: GroupCounts, set: Set) => void): Fill => {
      return (set, input) => {
        for (const c of input.counts ?? []) fill(c, set);
      };
    };
    /** each actor of each launcher; `set` adds the launcher's label where there is one */
    const actors = (fill: (view: ActorView, set: Set) => void): Fill => {
      return (set, input) => {
        for (const launcher of launchersOf(input)) {
          const labels = by(launcher);
          for (const view of launcher.actors) fill(view, (l, v) => set({ ...labels, ...l }, v));
        }
      };
    };

    this.#gauge(
      'skyq_group_messages',
      'Messages in the group by state: delayed, ready, active (leased) or dead.',
      ['group', 'state'],
      counts((c, set) => {
        if (c.error) return;
        for (const state of DEPTHS) set({ ...group(c), state }, c[state]);
      }),
    );
    this.#gauge(
      'skyq_group_paused',
      '1 when the group is paused (no launcher claims from it).',
      ['group'],
      counts((c, set) => {
        if (!c.error) set(group(c), c.paused ? 1 : 0);
      }),
    );
    this.#gauge(
      'skyq_group_up',
      "1 when the group's depths could be read from Redis for this scrape.",
      ['group'],
      (set, input) => {
        const read = new Map((input.counts ?? []).map((c) => [c.group, !c.error]));
        const groups = perLauncher
          ? Array.from({ length: this.#shape.groups ?? 0 }, (_, g) => g)
          : launchersOf(input).flatMap((launcher) => launcher.actors.map((view) => view.group));
        for (const g of groups) set(group({ group: g }), read.get(g) ? 1 : 0);
      },
    );
    for (const [counter, name, help] of ACTOR_COUNTERS) {
      // done and failed are split by job name too: a series per name (at most 100 and
      // 'other': see name-stats.ts) and one without the label for unnamed jobs, so the
      // series of a group still add up to its actor's count.
      const byName = counter === 'done' || counter === 'failed' ? counter : null;
      this.#counter(
        name,
        help,
        actors((view, set) => {
          if (!view.stat) return;
          if (!byName) return set(group(view), view.stat[counter]);
          let named = 0;
          for (const figure of view.stat.names) {
            set({ ...group(view), name: figure.name }, figure[byName]);
            named += figure[byName];
          }
          set(group(view), view.stat[counter] - named);
        }),
        withLauncher(byName ? ['group', 'name'] : ['group']),
      );
    }
    this.#gauge(
      'skyq_messages_in_flight',
      'Messages the actor holds right now: running, or leased ahead and waiting for their due time.',
      withLauncher(['group']),
      actors((view, set) => {
        if (view.stat) set(group(view), view.stat.inFlight);
      }),
    );
    this.#counter(
      'skyq_actor_restarts_total',
      "Times the group's actor thread died and was started again.",
      actors((view, set) => set(group(view), view.restarts)),
      withLauncher(['group']),
    );
    this.#gauge(
      'skyq_actor_up',
      "1 while the group's actor thread is running (0 while it restarts).",
      withLauncher(['group']),
      actors((view, set) => set(group(view), view.status === 'ok' ? 1 : 0)),
    );
    this.#gauge(
      'skyq_actor_state',
      `The actor's state: 1 for the current one of ${ACTOR_STATES.join(', ')}.`,
      withLauncher(['group', 'state']),
      actors((view, set) => {
        if (!view.stat) return;
        for (const state of ACTOR_STATES) {
          set({ ...group(view), state }, view.stat.state === state ? 1 : 0);
        }
      }),
    );
    for (const [histogram, name, help] of HISTOGRAMS) {
      const metric = new BucketHistogram(name, help, DURATION_BOUNDS_SECONDS, () => {
        const launchers = this.#input ? launchersOf(this.#input) : [];
        if (perLauncher) {
          // Published figures hold each launcher's totals' buckets, none per actor (and none
          // from launchers before they were published: those are left out, not shown as 0).
          return launchers.flatMap((launcher) => {
            const data = launcher.totals.histograms[histogram];
            const whole = data.count === 0 || data.buckets.length > 0;
            return whole ? [{ labels: by(launcher), data }] : [];
          });
        }
        return launchers
          .flatMap((launcher) => launcher.actors)
          .flatMap((view) => {
            if (!view.stat) return [];
            const data = view.stat.histograms[histogram];
            if (histogram !== 'handler') return [{ labels: group(view), data }];
            // Handler durations per job name, as the done/failed counters are.
            const names = view.stat.names;
            return [
              { labels: group(view), data: unnamedPart(data, names) },
              ...names.map((n) => ({
                labels: { ...group(view), name: n.name },
                data: n.histogram,
              })),
            ];
          });
      });
      this.registry.registerMetric(metric.asMetric());
    }
    // The rate limits, intake lists, Redis servers and launchers: launcher-series.ts.
    defineLauncherSeries({
      gauge: (...args) => this.#gauge(...args),
      counter: (...args) => this.#counter(...args),
      by,
      withLauncher,
    });
  }

  #gauge(name: string, help: string, labelNames: string[], fill: Fill): void {
    const gauge: Gauge<string> = new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect: () => {
        gauge.reset();
        if (this.#input) fill((labels, value) => gauge.set(labels, value), this.#input);
      },
    });
  }

  /** The runtime's counters only grow (its blocks outlive actor restarts): set, not counted. */
  #counter(name: string, help: string, fill: Fill, labelNames = ['group']): void {
    const counter: Counter<string> = new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect: () => {
        counter.reset();
        if (this.#input) fill((labels, value) => counter.inc(labels, value), this.#input);
      },
    });
  }
}
