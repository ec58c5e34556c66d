/**
 * Helpers for the HTTP and browser suites: a launcher serving HTTP on a free loopback port,
 * requests that look like the page's own, and /metrics read through a real Prometheus text
 * parser (parse-prometheus-text-format).
 */
import parsePrometheusText from 'parse-prometheus-text-format';
import { type Launcher, type StartOptions, startActors } from '../../src/index.js';
import { freshPrefix } from './queue.js';
import { fixture, tempDir } from './runtime.js';

export interface HttpLauncher {
  launcher: Launcher;
  /** the HTTP server's base URL */
  url: string;
  prefix: string;
}

/** A launcher on `redis` with its HTTP server on 127.0.0.1 (a free port), the HTTP fixture handler. */
export async function httpLauncher(
  redis: string,
  options: Partial<StartOptions> = {},
): Promise<HttpLauncher> {
  const prefix = options.prefix ?? freshPrefix('http');
  const launcher = await startActors({
    redis,
    prefix,
    groups: 2,
    logDir: tempDir('skyq-http-'),
    handler: fixture('http-handler.mjs'),
    lookaheadMs: 5,
    graceMs: 2000,
    http: { listen: '127.0.0.1:0' },
    ...options,
  });
  if (!launcher.http) throw new Error('the launcher has no HTTP server');
  return { launcher, url: launcher.http.url, prefix };
}

/** A same-origin POST as the dashboard sends it. */
export function postJson(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-skyq-request': '1', ...headers },
    body: JSON.stringify(body),
  });
}

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Families (name → type and help) as the parser reads them. */
export function metricFamilies(text: string): Map<string, { type: string; help: string }> {
  return new Map(parsePrometheusText(text).map((f) => [f.name, { type: f.type, help: f.help }]));
}

/**
 * Every sample line with its labels. The parser folds a labelled histogram's lines into one
 * bucket map (losing the labels), so histograms are read a second time as untyped lines.
 */
export function metricSamples(text: string): MetricSample[] {
  const untyped = text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped');
  return parsePrometheusText(untyped).flatMap((family) =>
    family.metrics.map((m) => ({
      name: family.name,
      labels: m.labels ?? {},
      value: Number(m.value),
    })),
  );
}

/** The value of the one sample with this name and (at least) these labels. */
export function sampleValue(
  samples: MetricSample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match`);
  return found[0]?.value;
}

export async function scrape(base: string): Promise<{ text: string; samples: MetricSample[] }> {
  const response = await fetch(new URL('/metrics', base));
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  return { text, samples: metricSamples(text) };
}
