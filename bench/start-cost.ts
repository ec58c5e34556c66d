/**
 * What starting the actors costs: wall time from `startActors` to every actor ready, and the CPU
 * the whole process spent meanwhile (process.cpuUsage counts every thread, so the ten actors and
 * the coordinator are in it). Used by bench/targets.ts; run on its own to repeat the measure:
 *   node dist/bench/start-cost.js [--runs 5] [--groups 10]
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/start-cost.js --runs 1   (a profile per thread)
 * With --idle-after S, each run then sits idle: S seconds to settle, then 20 s measured (the
 * cores and Redis calls idle actors cost); --watch-ms 0 turns the launcher's watcher off.
 *   node dist/bench/start-cost.js --runs 1 --idle-after 30 [--watch-ms 0]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis as IORedis, type Redis } from 'ioredis';
import { type Launcher, type StartOptions, startActors } from '../src/index.js';
import { startRedisServer } from '../src/redis/server.js';
import { cpuSince, diffFigures, redisFigures } from './measures.js';

/** The no-op handler that reports each start to the bench (see start-reporter.ts). */
export const BENCH_HANDLER = new URL('./skyq-handler.js', import.meta.url).href;
/** The same as a command table (named jobs: bench --names). */
export const BENCH_NAMED_HANDLER = new URL('./skyq-named-handler.js', import.meta.url).href;
/** The same for handlers on the piscina pool. */
export const BENCH_POOL_HANDLER = new URL('./skyq-pool-handler.js', import.meta.url).href;

export interface StartCost {
  /** startActors call → resolved (every actor connected, scripts and handler loaded) */
  seconds: number;
  /** CPU of this process, all threads, over the same interval */
  cpuSeconds: number;
}

/** Starts actors with `options` (defaults otherwise) and says what it cost. Caller stops them. */
export async function timedStart(
  options: StartOptions,
): Promise<{ launcher: Launcher; cost: StartCost }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const launcher = await startActors(options);
  const cost = {
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: cpuSince(cpu),
  };
  return { launcher, cost };
}

/** The rule: idle cost counts from 1 s after ready, when start-up work has settled. */
export const IDLE_AFTER_READY_MS = 1_000;

export interface IdleCost {
  /** CPU seconds of this process per second (the bench itself is idle meanwhile) */
  cores: number;
  /** Redis commands per second, every client but this measure's own INFO */
  redisCallsPerSecond: number;
  redisCores: number;
}

/** What the process and Redis spend over `ms` while nothing is pending. */
export async function measureIdle(monitor: Pick<Redis, 'info'>, ms: number): Promise<IdleCost> {
  const before = await redisFigures(monitor);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await sleep(ms);
  const cores = cpuSince(cpu) / ((performance.now() - started) / 1000);
  const redis = diffFigures(before, await redisFigures(monitor));
  return {
    cores,
    // The first INFO is counted in the second one's figures: it is the measure's, not skyq's.
    redisCallsPerSecond: (redis.calls - 1) / (ms / 1000),
    redisCores: redis.cpuSeconds / (ms / 1000),
  };
}

/** A private log directory per run, removed by the returned function. */
export function tempLogDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'skyq-bench-logs-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      groups: { type: 'string', default: '10' },
      'idle-after': { type: 'string' },
      'watch-ms': { type: 'string' },
    },
  });
  const idleAfter = values['idle-after'] === undefined ? null : Number(values['idle-after']);
  const watchMs = values['watch-ms'] === undefined ? {} : { watchMs: Number(values['watch-ms']) };
  const runs = Number(values.runs);
  const groups = Number(values.groups);
  const server = await startRedisServer();
  try {
    for (let run = 1; run <= runs; run++) {
      const logs = tempLogDir();
      const { launcher, cost } = await timedStart({
        redis: server.url,
        groups,
        handler: BENCH_HANDLER,
        logDir: logs.dir,
        ...watchMs,
      });
      let idle = '';
      if (idleAfter !== null) {
        await sleep(idleAfter * 1000);
        const monitor = new IORedis(server.url);
        const cost = await measureIdle(monitor, 20_000);
        monitor.disconnect();
        idle =
          `; idle from ${idleAfter} s after ready: ${cost.cores.toFixed(4)} cores, ` +
          `${cost.redisCallsPerSecond.toFixed(0)} Redis commands/s`;
      }
      await launcher.stop(1000);
      logs.remove();
      console.log(
        `run ${run}: ${groups} actors ready in ${cost.seconds.toFixed(2)} s, ` +
          `${cost.cpuSeconds.toFixed(2)} CPU-s${idle}`,
      );
    }
  } finally {
    await server.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
