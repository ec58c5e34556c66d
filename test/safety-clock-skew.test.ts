// A Redis server whose clock is off from the launcher's: due times (delay, runAt) are on
// Redis's clock, so its messages start early or late by the launcher's. The launcher compares
// each server's TIME with its own clock, logs a difference over 1 s once (and again when it
// moves by more than 1 s), and shows it in `skyq stats`, the dashboard and /metrics.
// Debian's libfaketime cannot run redis-server (it deadlocks with jemalloc), so the launcher's
// own clock is the one skewed here, through startActors' `wallClock`; the server is real.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Launcher } from '../src/index.js';
import { startActors } from '../src/start.js';
import { sampleValue, scrape } from './helpers/http.js';
import { freshPrefix, waitFor } from './helpers/queue.js';
import { runCli, tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('a launcher whose clock is 10 s behind Redis', () => {
  let offsetMs = 10_000;
  let launcher: Launcher;
  let logDir: string;
  let base: string;
  const prefix = freshPrefix('skew');
  const warnings: string[] = [];
  const listener = (warning: Error & { code?: string }) => {
    if (warning.code === 'SKYQ_CLOCK_SKEW') warnings.push(warning.message);
  };
  const skewLines = () =>
    readFileSync(join(logDir, 'launcher.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"event":"clock-skew"'));
  /** Drops every connection: the launcher reconnects and checks again. */
  const reconnect = () => redis.client.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');

  beforeAll(async () => {
    process.on('warning', listener);
    logDir = tempDir();
    launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      logDir,
      wallClock: () => Date.now() - offsetMs,
      http: { listen: '127.0.0.1:0' },
    });
    base = launcher.http?.url as string;
  });
  afterAll(async () => {
    process.off('warning', listener);
    await launcher?.stop(0);
  });

  it('is measured at start, logged once and warned once', async () => {
    const [server] = launcher.servers();
    expect(server?.server).toBe(`127.0.0.1:${redis.server.port}`);
    expect(Math.abs((server?.skewMs ?? 0) - 10_000)).toBeLessThan(500);
    await waitFor('the skew in the log', () => (skewLines().length > 0 ? true : undefined));
    expect(skewLines()).toHaveLength(1);
    expect(skewLines()[0]).toContain('10.0 s ahead of');
    expect(warnings).toHaveLength(1);
  });

  it('is shown in /metrics, the dashboard and skyq stats', async () => {
    const { samples } = await scrape(base);
    const server = `127.0.0.1:${redis.server.port}`;
    const seconds = sampleValue(samples, 'skyq_redis_clock_skew_seconds', { server }) ?? 0;
    expect(Math.abs(seconds - 10)).toBeLessThan(0.5);
    const overview = (await (await fetch(new URL('/api/overview', base))).json()) as {
      servers: { server: string; skewMs: number }[];
    };
    expect(Math.abs((overview.servers[0]?.skewMs ?? 0) - 10_000)).toBeLessThan(500);
    const stats = await waitFor('skyq stats showing the skew', async () => {
      const run = await runCli([
        'stats',
        '--redis',
        redis.server.url,
        '--prefix',
        prefix,
        '--groups',
        '2',
      ]);
      return run.stdout.includes('clock 10.0 s ahead of launcher') ? run : undefined;
    });
    expect(stats.code).toBe(0);
    expect(stats.stdout).toContain(
      `redis ${server}: clock 10.0 s ahead of launcher ${launcher.id}`,
    );
  });

  it('is logged again only when it moves by more than 1 s', async () => {
    offsetMs = 10_500;
    await reconnect();
    await waitFor('a check after the reconnect', () =>
      Math.abs((launcher.servers()[0]?.skewMs ?? 0) - 10_500) < 300 ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(skewLines()).toHaveLength(1);
    offsetMs = 12_500;
    await reconnect();
    await waitFor('the second skew line', () => (skewLines().length === 2 ? true : undefined));
    expect(skewLines()[1]).toContain('12.5 s ahead of');
    expect(warnings).toHaveLength(2);
    offsetMs = 0;
    await reconnect();
    await waitFor('the all-clear', () => (skewLines().length === 3 ? true : undefined));
    expect(skewLines()[2]).toContain('within 1 s');
    expect(warnings).toHaveLength(2);
  });
});
