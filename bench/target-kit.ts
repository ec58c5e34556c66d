/**
 * What every section of bench/targets.ts is built from: the sizes, fresh private redis-servers,
 * a skyq run or ten idle actors on one, and the rows (target-sections.ts holds the sections).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Launcher } from '../src/index.js';
import { startRedisServer } from '../src/redis/server.js';
import { runSkyq, type SkyqRunOptions } from './skyq.js';
import { BENCH_HANDLER, type StartCost, tempLogDir, timedStart } from './start-cost.js';
import type { Target, TargetRow } from './target-table.js';
import type { BenchResult } from './workloads.js';
import { defaultWorkload, type WorkloadOptions } from './workloads.js';

export interface Sizes {
  idleSeconds: number;
  /**
   * idle: seconds between the first window and the settled one. V8's memory reducer runs two or
   * three full collections in each of the eleven isolates until ~35 s after start-up (then
   * nothing but a scavenge every few seconds): a window before that measures those.
   */
  idleSettleSeconds: number;
  steadyRate: number;
  steadySeconds: number;
  seedCount: number;
  seedSpreadMs: number;
  burstCount: number;
  addbulkCount: number;
  poolCount: number;
  memoryCount: number;
  growthPending: number;
  growthBase: number;
  growthDrain: number;
  /** seconds past the last due time before the rest counts as lost */
  graceSeconds: number;
  /** startActors' actorNice for every section (undefined: its default) */
  actorNice?: number;
  /** true: keepDone false in the consuming runs, to price the history default */
  noHistory?: boolean;
  /** named jobs in the consuming runs: names job.0 … job.<n−1>, a command table handler */
  names?: number;
}

export interface SectionOutcome {
  rows: TargetRow[];
  results: Record<string, unknown>;
}

export type Section = (sizes: Sizes) => Promise<SectionOutcome>;

export const ACTORS = 10;

export async function withServer<T>(run: (url: string) => Promise<T>): Promise<T> {
  const server = await startRedisServer();
  try {
    return await run(server.url);
  } finally {
    await server.stop();
  }
}

/** One skyq run on its own fresh redis-server. */
export function skyqRun(w: WorkloadOptions, sizes: Sizes, options: SkyqRunOptions = {}) {
  w.graceMs = sizes.graceSeconds * 1000;
  const nice = sizes.actorNice === undefined ? {} : { actorNice: sizes.actorNice };
  const history = sizes.noHistory ? { keepDone: false as const } : {};
  const names = sizes.names ? { names: sizes.names } : {};
  return withServer((url) => runSkyq(url, w, { ...nice, ...history, ...names, ...options }));
}

export function workload(name: WorkloadOptions['name'], changes: Partial<WorkloadOptions>) {
  return { ...defaultWorkload(name), ...changes };
}

export const atMost = (n: number): Target => ({ atMost: n });
export const atLeast = (n: number): Target => ({ atLeast: n });

export function row(
  section: string,
  figure: string,
  measured: number,
  unit: string,
  target?: Target,
) {
  return target ? { section, figure, measured, unit, target } : { section, figure, measured, unit };
}

export const perMessageUs = (seconds: number, r: BenchResult) => (seconds * 1e6) / r.messages;

/** Lost, duplicates and early starts: the guarantees every consuming section checks. */
export function guaranteeRows(section: string, r: BenchResult, label = ''): TargetRow[] {
  return [
    row(section, `lost${label}`, r.lost, '', atMost(0)),
    row(section, `duplicates${label}`, r.duplicates, '', atMost(0)),
    row(section, `early starts${label}`, r.early.count, '', atMost(0)),
    row(section, `earliest start, before due${label}`, r.early.maxMs, 'ms'),
  ];
}

/** Resolves how many the actors handled once `count` were, or when `ms` passed. */
export async function waitForHandled(
  launcher: Launcher,
  count: number,
  ms: number,
): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const done = (await launcher.stats()).totals.done;
    if (done >= count || Date.now() > until) return done;
    await sleep(100);
  }
}

/** Ten actors with startActors' defaults on a fresh server, stopped after `run`. */
export function withActors<T>(
  sizes: Sizes,
  run: (url: string, cost: StartCost, launcher: Launcher) => Promise<T>,
): Promise<T> {
  return withServer(async (url) => {
    const logs = tempLogDir();
    let launcher: Launcher | undefined;
    try {
      const nice = sizes.actorNice === undefined ? {} : { actorNice: sizes.actorNice };
      const started = await timedStart({
        redis: url,
        handler: BENCH_HANDLER,
        logDir: logs.dir,
        ...nice,
      });
      launcher = started.launcher;
      return await run(url, started.cost, started.launcher);
    } finally {
      await launcher?.stop(1000);
      logs.remove();
    }
  });
}
