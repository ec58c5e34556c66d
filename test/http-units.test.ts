// The HTTP layer's parts that need no server: listen addresses, the access policy, the
// histogram exposition (read back by a real Prometheus parser) and the windowed lateness.
import type { IncomingMessage } from 'node:http';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, parseListenAddress } from '../src/http/address.js';
import { BucketHistogram } from '../src/http/bucket-histogram.js';
import { LatenessWindow } from '../src/http/lateness-window.js';
import { DURATION_BOUNDS_SECONDS } from '../src/http/metrics.js';
import { AccessPolicy } from '../src/http/policy.js';
import { preview } from '../src/http/preview.js';
import { Histogram } from '../src/runtime/histogram.js';
import type { LauncherStats } from '../src/runtime/launcher-stats.js';
import { summaries } from '../src/runtime/stat-block.js';
import { metricFamilies, metricSamples, sampleValue } from './helpers/http.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('listen addresses', () => {
  it('reads the forms --http takes', () => {
    expect(parseListenAddress(true)).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListenAddress('9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(parseListenAddress('0.0.0.0:80')).toEqual({ host: '0.0.0.0', port: 80 });
    expect(parseListenAddress('localhost')).toEqual({ host: 'localhost', port: 9464 });
    expect(parseListenAddress('[::1]:9465')).toEqual({ host: '::1', port: 9465 });
  });

  it('refuses what it cannot read, naming the flag', () => {
    for (const bad of [':9464', '1.2.3.4:99999', 'host:port', '::1:80', 'a b', '']) {
      expect(() => parseListenAddress(bad), bad).toThrow(/^http: /);
    }
  });

  it('knows loopback from the rest', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.evil.example']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('access policy', () => {
  const open = { host: '0.0.0.0', port: 9464 };
  const local = { host: '127.0.0.1', port: 9464 };

  it('refuses an address other machines reach unless a token is set', () => {
    expect(() => new AccessPolicy(open, null)).toThrow(/--auth-token or set SKYQ_DASHBOARD_TOKEN/);
    expect(() => new AccessPolicy(open, 'short')).toThrow(/at least 8 characters/);
    expect(new AccessPolicy(open, 'a-long-token').needsToken).toBe(true);
    expect(new AccessPolicy(local, null).needsToken).toBe(false);
  });

  it('takes the token as a bearer or as the session cookie, never a near miss', () => {
    const policy = new AccessPolicy(open, 'a-long-token');
    const cookie = policy.sessionCookie().split(';')[0] as string;
    expect(cookie).not.toContain('a-long-token');
    expect(policy.authorized(request({ authorization: 'Bearer a-long-token' }))).toBe(true);
    expect(policy.authorized(request({ cookie: `other=1; ${cookie}` }))).toBe(true);
    expect(policy.authorized(request({ authorization: 'Bearer a-long-tokeN' }))).toBe(false);
    expect(policy.authorized(request({ cookie: 'skyq_session=a-long-token' }))).toBe(false);
    expect(policy.authorized(request({}))).toBe(false);
  });

  it('answers loopback names only when bound to loopback (DNS rebinding)', () => {
    const policy = new AccessPolicy(local, null);
    expect(policy.hostAllowed(request({ host: '127.0.0.1:9464' }))).toBe(true);
    expect(policy.hostAllowed(request({ host: 'localhost:9464' }))).toBe(true);
    expect(policy.hostAllowed(request({ host: '[::1]:9464' }))).toBe(true);
    expect(policy.hostAllowed(request({ host: 'attacker.example:9464' }))).toBe(false);
    expect(policy.hostAllowed(request({}))).toBe(false);
  });

  it('lets a change through only with the header, JSON and a same-origin browser', () => {
    const policy = new AccessPolicy(local, null);
    const good = {
      host: '127.0.0.1:9464',
      'x-skyq-request': '1',
      'content-type': 'application/json',
    };
    expect(policy.csrfProblem(request(good))).toBeNull();
    expect(
      policy.csrfProblem(
        request({ ...good, origin: 'http://127.0.0.1:9464', 'sec-fetch-site': 'same-origin' }),
      ),
    ).toBeNull();
    const { 'x-skyq-request': _, ...noHeader } = good;
    expect(policy.csrfProblem(request(noHeader))).toMatch(/x-skyq-request/);
    expect(
      policy.csrfProblem(request({ ...good, 'content-type': 'application/x-www-form-urlencoded' })),
    ).toMatch(/application\/json/);
    expect(policy.csrfProblem(request({ ...good, 'sec-fetch-site': 'cross-site' }))).toMatch(
      /cross-site/,
    );
    expect(policy.csrfProblem(request({ ...good, origin: 'http://evil.example' }))).toMatch(
      /another origin/,
    );
  });
});

describe('histogram exposition', () => {
  it('gives exact cumulative buckets at the Prometheus bounds, in seconds', async () => {
    const histogram = new Histogram();
    for (const ms of [0.2, 0.999, 1.5, 2.4, 2.5, 40, 999, 59_000, 61_000, 120_000]) {
      histogram.record(ms);
    }
    const registry = new Registry();
    const metric = new BucketHistogram('skyq_test_seconds', 'test', DURATION_BOUNDS_SECONDS, () => [
      { labels: { group: '3' }, data: histogram.data() },
    ]);
    registry.registerMetric(metric.asMetric());
    const text = await registry.metrics();
    expect(metricFamilies(text).get('skyq_test_seconds')?.type).toBe('HISTOGRAM');
    const samples = metricSamples(text);
    const bucket = (le: string) =>
      sampleValue(samples, 'skyq_test_seconds_bucket', { group: '3', le });
    expect(bucket('0.001')).toBe(2); // 0.2 ms, 0.999 ms
    expect(bucket('0.0025')).toBe(4); // + 1.5, 2.4 (2.5 ms lands in the next bucket)
    expect(bucket('0.005')).toBe(5);
    expect(bucket('0.05')).toBe(6);
    expect(bucket('1')).toBe(7);
    expect(bucket('60')).toBe(8);
    expect(bucket('+Inf')).toBe(10);
    expect(sampleValue(samples, 'skyq_test_seconds_count', { group: '3' })).toBe(10);
    expect(sampleValue(samples, 'skyq_test_seconds_sum', { group: '3' })).toBeCloseTo(
      (0.2 + 0.999 + 1.5 + 2.4 + 2.5 + 40 + 999 + 59_000 + 61_000 + 120_000) / 1000,
      6,
    );
    const les = samples
      .filter((s) => s.name === 'skyq_test_seconds_bucket')
      .map((s) => s.labels.le);
    expect(les).toEqual([...DURATION_BOUNDS_SECONDS.map(String), '+Inf']);
  });
});

describe('lateness over the last interval', () => {
  const launcher = (id: string, lateness: Histogram, withBuckets = true): LauncherStats => {
    const data = lateness.data();
    const histograms = { lateness: data, handler: new Histogram().data(), redisRtt: data };
    const totals = { summary: summaries(histograms), histograms };
    if (!withBuckets) totals.histograms = { ...histograms, lateness: { ...data, buckets: [] } };
    return { launcherId: id, totals } as unknown as LauncherStats;
  };

  it('reports what ran between two readings, not since start', () => {
    const window = new LatenessWindow();
    const histogram = new Histogram();
    for (let i = 0; i < 1000; i++) histogram.record(500); // a slow start
    expect(window.next([launcher('a', histogram)])).toEqual({ p50: null, p99: null, mean: null });
    for (let i = 0; i < 100; i++) histogram.record(2);
    const now = window.next([launcher('a', histogram)]);
    expect(now.p50).toBeGreaterThanOrEqual(2);
    expect(now.p99).toBeLessThanOrEqual(2.1);
    expect(now.mean).toBe(2);
    expect(window.next([launcher('a', histogram)])).toEqual({ p50: null, p99: null, mean: null });
  });

  it('gives the mean alone for figures published without buckets', () => {
    const window = new LatenessWindow();
    const histogram = new Histogram();
    histogram.record(10);
    window.next([launcher('b', histogram, false)]);
    histogram.record(30);
    histogram.record(50);
    expect(window.next([launcher('b', histogram, false)])).toEqual({
      p50: null,
      p99: null,
      mean: 40,
    });
  });
});

describe('body preview', () => {
  it('keeps markup as text and cuts long bodies', () => {
    expect(preview('<script>x</script>', 100)).toEqual({
      text: '<script>x</script>',
      length: 18,
      truncated: false,
    });
    expect(preview({ a: 'x'.repeat(50) }, 10)).toMatchObject({
      text: '{"a":"xxxx',
      truncated: true,
    });
  });
});
