// /metrics of the stand-alone dashboard (`skyq dashboard`): the series a launcher's own /metrics
// serves, for every launcher publishing to this Redis, each under its `launcher` label, read
// through a real Prometheus text parser. No series appears twice (Prometheus refuses a scrape
// that repeats one), counters match each launcher's own figures, and histograms are each
// launcher's totals with cumulative buckets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { DURATION_BOUNDS_SECONDS } from '../src/http/metrics.js';
import { type Launcher, Queue, startActors } from '../src/index.js';
import { metricFamilies, sampleValue, scrape } from './helpers/http.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('stand-alone dashboard /metrics', () => {
  const prefix = freshPrefix('dmetrics');
  const launchers: Launcher[] = [];
  let dashboard: HttpHandle;
  let queue: Queue;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      launchers.push(
        await startActors({
          redis: redis.server.url,
          prefix,
          groups: 2,
          logDir: tempDir(),
          handler: fixture('http-handler.mjs'),
          lookaheadMs: 5,
        }),
      );
    }
    dashboard = await serveDashboard(
      { redis: redis.server.url, prefix, groups: 2 },
      { listen: '127.0.0.1:0' },
    );
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await queue.addBulk(
      Array.from({ length: 200 }, (_, i) => ({ body: {}, options: { group: i % 2, delay: 10 } })),
    );
    await queue.add('later', { group: 1, delay: 600_000 });
    // Handled, and published: a launcher publishes its figures every second.
    await waitFor('200 done, as published', async () => {
      const { samples } = await scrape(dashboard.url);
      const done = samples
        .filter((s) => s.name === 'skyq_messages_done_total')
        .reduce((sum, s) => sum + s.value, 0);
      // Every launcher published at least once: one may have handled all 200 before the
      // other's first publish (one CI run read the second launcher's info as missing).
      // Each actor of each launcher too: a launcher's first publish can come before an actor's
      // first figures (one CI run found a group's series missing after 200 were done).
      const published = launchers.every((l) =>
        ['0', '1'].every((group) =>
          samples.some(
            (s) =>
              s.name === 'skyq_messages_done_total' &&
              s.labels.launcher === l.id &&
              s.labels.group === group,
          ),
        ),
      );
      return done === 200 && published ? true : undefined;
    });
  }, 60_000);
  afterAll(async () => {
    await dashboard?.close();
    await queue?.close();
    for (const launcher of launchers) await launcher.stop(0);
  });

  it('serves the launcher series under Prometheus naming, none twice', async () => {
    const response = await fetch(new URL('/metrics', dashboard.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const families = metricFamilies(text);
    const expected: Record<string, string> = {
      skyq_group_messages: 'GAUGE',
      skyq_group_paused: 'GAUGE',
      skyq_group_up: 'GAUGE',
      skyq_messages_claimed_total: 'COUNTER',
      skyq_messages_done_total: 'COUNTER',
      skyq_messages_failed_total: 'COUNTER',
      skyq_messages_in_flight: 'GAUGE',
      skyq_actor_restarts_total: 'COUNTER',
      skyq_actor_up: 'GAUGE',
      skyq_actor_state: 'GAUGE',
      skyq_lateness_seconds: 'HISTOGRAM',
      skyq_handler_duration_seconds: 'HISTOGRAM',
      skyq_redis_round_trip_seconds: 'HISTOGRAM',
      skyq_launcher_start_time_seconds: 'GAUGE',
      skyq_launcher_info: 'GAUGE',
    };
    for (const [name, type] of Object.entries(expected)) {
      expect(families.get(name)?.type, name).toBe(type);
      expect(families.get(name)?.help, name).not.toBe('');
    }
    for (const [name, { type }] of families) {
      expect(name).toMatch(/^skyq_[a-z_]+$/);
      if (type === 'COUNTER') expect(name).toMatch(/_total$/);
      else expect(name).not.toMatch(/_total$/);
    }
    // Each family's HELP and TYPE once, and each series (name and labels) once.
    const seen = new Set<string>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const key = line.startsWith('#') ? line.split(' ').slice(0, 3).join(' ') : line.split(' ')[0];
      expect(seen.has(key as string), key).toBe(false);
      seen.add(key as string);
    }
  });

  it("labels each launcher's series, with its own figures", async () => {
    const { samples } = await scrape(dashboard.url);
    for (const launcher of launchers) {
      const stats = await launcher.stats();
      const id = launcher.id;
      expect(sampleValue(samples, 'skyq_launcher_info', { launcher: id })).toBe(1);
      expect(sampleValue(samples, 'skyq_launcher_start_time_seconds', { launcher: id })).toBe(
        stats.startedAt / 1000,
      );
      for (const view of stats.actors) {
        const labels = { launcher: id, group: String(view.group) };
        expect(sampleValue(samples, 'skyq_messages_done_total', labels)).toBe(view.stat?.done);
        expect(sampleValue(samples, 'skyq_messages_claimed_total', labels)).toBe(
          view.stat?.claimed,
        );
        expect(sampleValue(samples, 'skyq_actor_up', labels)).toBe(1);
        expect(sampleValue(samples, 'skyq_actor_state', { ...labels, state: 'running' })).toBe(1);
      }
      // Histograms: the launcher's totals, bucket by bucket cumulative, +Inf the count.
      for (const name of ['skyq_lateness_seconds', 'skyq_handler_duration_seconds']) {
        const buckets = samples.filter(
          (s) => s.name === `${name}_bucket` && s.labels.launcher === id,
        );
        expect(buckets.map((s) => s.labels.le)).toEqual([
          ...DURATION_BOUNDS_SECONDS.map(String),
          '+Inf',
        ]);
        const counts = buckets.map((s) => s.value);
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
        const count = sampleValue(samples, `${name}_count`, { launcher: id });
        expect(count).toBe(stats.totals.done);
        expect(counts.at(-1)).toBe(count);
      }
    }
    // Depths are the queue's, once per group, not per launcher.
    expect(sampleValue(samples, 'skyq_group_messages', { group: '1', state: 'delayed' })).toBe(1);
    expect(sampleValue(samples, 'skyq_group_up', { group: '0' })).toBe(1);
    expect(sampleValue(samples, 'skyq_group_up', { group: '1' })).toBe(1);
  });
});
