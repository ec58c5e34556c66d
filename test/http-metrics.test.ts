// /metrics of a running launcher, read through a real Prometheus text parser: every series is
// there under Prometheus naming rules, depths follow the queue, and counters and histograms
// move as messages flow.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DURATION_BOUNDS_SECONDS } from '../src/http/metrics.js';
import { type Launcher, Queue } from '../src/index.js';
import { httpLauncher, metricFamilies, sampleValue, scrape } from './helpers/http.js';
import { ROOT, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('/metrics', () => {
  let launcher: Launcher;
  let url: string;
  let queue: Queue;

  beforeAll(async () => {
    const started = await httpLauncher(redis.server.url);
    launcher = started.launcher;
    url = started.url;
    queue = new Queue({ redis: redis.server.url, groups: 2, prefix: started.prefix });
  });
  afterAll(async () => {
    await queue?.close();
    await launcher?.stop(0);
  });

  it('serves every series under the skyq_ prefix with Prometheus naming', async () => {
    const response = await fetch(new URL('/metrics', url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = metricFamilies(await response.text());
    const expected: Record<string, string> = {
      skyq_group_messages: 'GAUGE',
      skyq_group_paused: 'GAUGE',
      skyq_group_up: 'GAUGE',
      skyq_messages_claimed_total: 'COUNTER',
      skyq_messages_done_total: 'COUNTER',
      skyq_messages_failed_total: 'COUNTER',
      skyq_messages_retried_total: 'COUNTER',
      skyq_messages_dead_total: 'COUNTER',
      skyq_messages_stale_total: 'COUNTER',
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
      if (type === 'HISTOGRAM') expect(name).toMatch(/_seconds$/);
    }
  });

  it("serves the series docs/dashboard.md's table names, with no label it leaves out", async () => {
    const doc = readFileSync(join(ROOT, 'docs/dashboard.md'), 'utf8');
    const documented = new Map<string, Set<string>>();
    for (const row of doc.matchAll(/^\| (`skyq_[^|]*)\| [^|]+ \| ([^|]*) \|/gm)) {
      const names = [...(row[1] as string).matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string);
      const first = names[0] as string;
      // "`skyq_messages_claimed_total`, `_done_total`": a name starting with _ shares the stem.
      const stem = first.replace(/_[a-z]+_total$/, '');
      const labels = new Set((row[2] as string).match(/[a-z]+/g) ?? []);
      for (const name of names) documented.set(name.startsWith('_') ? stem + name : name, labels);
    }
    expect(documented.size).toBeGreaterThan(20);
    const { text, samples } = await scrape(url);
    const served = [...metricFamilies(text).keys()];
    // Every documented series is served; every served one is in the table or the text below it.
    for (const name of documented.keys()) expect(served, name).toContain(name);
    const named = (name: string) => documented.has(name) || doc.includes(`\`${name}\``);
    expect(served.filter((name) => !named(name))).toEqual([]);
    for (const sample of samples) {
      const family = sample.name.replace(/_(bucket|sum|count)$/, '');
      const allowed = documented.get(family);
      if (!allowed) continue;
      const extra = Object.keys(sample.labels).filter(
        (label) => label !== 'le' && !allowed.has(label),
      );
      expect([family, extra]).toEqual([family, []]);
    }
    // The launcher's own start time carries no label; launcher and host are the info's.
    const start = samples.find((s) => s.name === 'skyq_launcher_start_time_seconds');
    expect(start?.labels).toEqual({});
  });

  it('shows depths, paused groups and actor states as they are', async () => {
    const stats = await launcher.stats();
    await queue.pause(1);
    try {
      await queue.addBulk(Array.from({ length: 7 }, () => ({ body: 'x', options: { group: 1 } })));
      await queue.add('later', { group: 1, delay: 60_000 });
      const { samples } = await scrape(url);
      const depth = (state: string) =>
        sampleValue(samples, 'skyq_group_messages', { group: '1', state });
      expect(depth('ready')).toBe(7);
      expect(depth('delayed')).toBe(1);
      expect(depth('active')).toBe(0);
      expect(sampleValue(samples, 'skyq_group_paused', { group: '1' })).toBe(1);
      expect(sampleValue(samples, 'skyq_group_paused', { group: '0' })).toBe(0);
      expect(sampleValue(samples, 'skyq_group_up', { group: '1' })).toBe(1);
      expect(sampleValue(samples, 'skyq_actor_up', { group: '0' })).toBe(1);
      expect(sampleValue(samples, 'skyq_actor_state', { group: '0', state: 'running' })).toBe(1);
      expect(sampleValue(samples, 'skyq_actor_state', { group: '0', state: 'stopped' })).toBe(0);
      expect(sampleValue(samples, 'skyq_launcher_info', { launcher: stats.launcherId })).toBe(1);
      expect(sampleValue(samples, 'skyq_launcher_start_time_seconds')).toBe(stats.startedAt / 1000);
    } finally {
      await queue.resume(1); // the other tests want group 1 running, even when this one failed
    }
  });

  it('moves counters and histograms as messages flow', async () => {
    const before = (await scrape(url)).samples;
    const done0 = sampleValue(before, 'skyq_messages_done_total', { group: '0' }) ?? -1;
    expect(done0).toBeGreaterThanOrEqual(0);
    await queue.addBulk(
      Array.from({ length: 50 }, (_, i) => ({ body: { n: i }, options: { group: 0, delay: 20 } })),
    );
    await redis.client.set('http-metrics:always', '1');
    await queue.add({ failWhile: 'http-metrics:always', error: 'no' }, { group: 0, attempts: 1 });
    const after = await waitFor('the 51 messages to be handled', async () => {
      const { samples } = await scrape(url);
      const done = sampleValue(samples, 'skyq_messages_done_total', { group: '0' }) ?? 0;
      const dead = sampleValue(samples, 'skyq_messages_dead_total', { group: '0' }) ?? 0;
      return done >= done0 + 50 && dead >= 1 ? samples : undefined;
    });
    expect(
      sampleValue(after, 'skyq_messages_claimed_total', { group: '0' }),
    ).toBeGreaterThanOrEqual(51);
    expect(sampleValue(after, 'skyq_messages_failed_total', { group: '0' })).toBe(1);
    expect(sampleValue(after, 'skyq_group_messages', { group: '0', state: 'dead' })).toBe(1);
    for (const name of [
      'skyq_lateness_seconds',
      'skyq_handler_duration_seconds',
      'skyq_redis_round_trip_seconds',
    ]) {
      const buckets = after.filter((s) => s.name === `${name}_bucket` && s.labels.group === '0');
      expect(buckets.map((s) => s.labels.le)).toEqual([
        ...DURATION_BOUNDS_SECONDS.map(String),
        '+Inf',
      ]);
      const counts = buckets.map((s) => s.value);
      expect(counts).toEqual([...counts].sort((a, b) => a - b)); // cumulative
      const count = sampleValue(after, `${name}_count`, { group: '0' }) ?? 0;
      expect(counts.at(-1)).toBe(count);
      expect(count, name).toBeGreaterThanOrEqual(name === 'skyq_redis_round_trip_seconds' ? 1 : 51);
      expect(sampleValue(after, `${name}_sum`, { group: '0' })).toBeGreaterThanOrEqual(0);
    }
    // The messages were due 20 ms after adding: nearly all started within a second of that.
    const late = (le: string) =>
      sampleValue(after, 'skyq_lateness_seconds_bucket', { group: '0', le }) ?? 0;
    expect(late('1')).toBeGreaterThanOrEqual(45);
  });

  it('answers concurrent scrapes with whole, parseable texts', async () => {
    const texts = await Promise.all(
      Array.from({ length: 5 }, () => scrape(url).then((s) => s.samples.length)),
    );
    expect(new Set(texts).size).toBe(1);
  });
});
