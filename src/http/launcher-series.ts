// The /metrics series of what is neither a group nor an actor: the rate-limit buckets every
// launcher of the prefix shares, the intake's lists, the Redis servers, and the launchers
// themselves. MetricsExporter (metrics.ts) defines them with its own gauge and counter makers,
// so they are filled from the same reading per scrape as the rest.
import type { BucketState } from '../queue/ratelimit/buckets.js';
import type { LauncherStats } from '../runtime/launcher-stats.js';
import type { Fill, Labels, MetricsInput, Set as SetValue } from './metrics.js';

/** Each launcher of the input: one, or every launcher publishing (the dashboard). */
export const launchersOf = (input: MetricsInput): LauncherStats[] =>
  Array.isArray(input.stats) ? input.stats : [input.stats];

/** How the exporter makes a series, and labels a launcher's (see MetricsShape.perLauncher). */
export interface SeriesMaker {
  gauge(name: string, help: string, labelNames: string[], fill: Fill): void;
  counter(name: string, help: string, fill: Fill, labelNames?: string[]): void;
  /** the launcher's own label, where series are per launcher */
  by(launcher: LauncherStats): Labels;
  /** the label names, with `launcher` first where series are per launcher */
  withLauncher(names: string[]): string[];
}

export function defineLauncherSeries(make: SeriesMaker): void {
  const { by, withLauncher } = make;
  // The rate limits every launcher of the prefix shares (src/queue/ratelimit/): '*' is the
  // whole queue's bucket, any other name a job name's.
  const buckets = (fill: (b: BucketState, set: SetValue) => void): Fill => {
    return (set, input) => {
      for (const b of input.limits ?? []) fill(b, set);
    };
  };
  make.gauge(
    'skyq_rate_limit_tokens',
    "Tokens in the rate limit's bucket now ('*' = the whole queue): starts it allows at once.",
    ['name'],
    buckets((b, set) => set({ name: b.name }, b.tokens)),
  );
  make.gauge(
    'skyq_rate_limit_per_second',
    'The rate limit: starts allowed per second.',
    ['name'],
    buckets((b, set) => set({ name: b.name }, (b.max * 1000) / b.perMs)),
  );
  make.gauge(
    'skyq_rate_limited',
    '1 while the rate limit holds work back (a take got fewer tokens than it asked lately).',
    ['name'],
    buckets((b, set) => set({ name: b.name }, b.limited ? 1 : 0)),
  );
  // The intake's lists (src/runtime/intake/): what it moved, and what waits in each.
  make.counter(
    'skyq_intake_items_total',
    'Items this launcher moved from the intake list (or sorted set) into skyq (dead letters included).',
    (set, input) => {
      for (const launcher of launchersOf(input)) {
        for (const figure of launcher.intake ?? []) {
          set({ ...by(launcher), list: figure.list }, figure.items);
        }
      }
    },
    withLauncher(['list']),
  );
  make.gauge(
    'skyq_intake_list_length',
    'Items waiting in the intake list, or members in the intake sorted set (absent while it cannot be read).',
    withLauncher(['list']),
    (set, input) => {
      for (const launcher of launchersOf(input)) {
        for (const figure of launcher.intake ?? []) {
          if (figure.length !== null) set({ ...by(launcher), list: figure.list }, figure.length);
        }
      }
    },
  );
  make.gauge(
    'skyq_redis_evicting',
    'Per Redis server: 1 when its maxmemory-policy can delete queued messages (fix: CONFIG SET maxmemory-policy noeviction).',
    ['server', 'policy'],
    (set, input) => {
      for (const s of input.servers ?? [])
        set({ server: s.server, policy: s.policy ?? 'unknown' }, s.evicting ? 1 : 0);
    },
  );
  make.counter(
    'skyq_redis_data_lost_total',
    "Per Redis server: how many times it came back without skyq's data (its groups' dataset tags gone or changed), as this launcher saw it.",
    (set, input) => {
      for (const s of input.servers ?? []) set({ server: s.server }, s.dataLostTotal ?? 0);
    },
    ['server'],
  );
  make.gauge(
    'skyq_redis_clock_skew_seconds',
    "Per Redis server: its clock (TIME) minus this launcher's; due times are on Redis's clock.",
    ['server'],
    (set, input) => {
      for (const s of input.servers ?? [])
        if (s.skewMs !== null) set({ server: s.server }, s.skewMs / 1000);
    },
  );
  make.gauge(
    'skyq_launcher_start_time_seconds',
    'When this launcher started, in seconds since the epoch.',
    withLauncher([]),
    (set, input) => {
      for (const launcher of launchersOf(input)) set(by(launcher), launcher.startedAt / 1000);
    },
  );
  make.gauge(
    'skyq_launcher_info',
    'Always 1; its labels name the launcher and its host.',
    ['launcher', 'host'],
    (set, input) => {
      for (const { launcherId, host } of launchersOf(input)) set({ launcher: launcherId, host }, 1);
    },
  );
}
