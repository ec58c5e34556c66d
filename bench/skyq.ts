// skyq under the bench's workloads: a Queue adds with addBulk, the real actor runtime (one
// thread per group) consumes with a no-op handler that reports each start over a
// BroadcastChannel, so lateness is measured at handler start against the message's dueAt.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { type Launcher, Queue, type StartOptions } from '../src/index.js';
import { listenForStarts } from './handler-starts.js';
import { actorLatenessP99 } from './launcher-figures.js';
import { diffFigures, type RedisFigures, redisFigures, sumFigures } from './measures.js';
import type { SkyqShape } from './skyq-shape.js';
import {
  BENCH_HANDLER,
  BENCH_NAMED_HANDLER,
  BENCH_POOL_HANDLER,
  IDLE_AFTER_READY_MS,
  measureIdle,
  type StartCost,
  tempLogDir,
  timedStart,
} from './start-cost.js';
import { RunTracker } from './tracker.js';
import {
  assertLoopback,
  type BenchResult,
  backlogChunks,
  consumeAfterAdding,
  DEFAULT_GRACE_MS,
  makeBody,
  type Progress,
  produce,
  type WorkloadOptions,
} from './workloads.js';

export { DEFAULT_SKYQ_SHAPE, type SkyqShape } from './skyq-shape.js';

export interface SkyqRunOptions {
  /** actors, concurrency, batch; what is left out takes startActors' defaults */
  shape?: Partial<SkyqShape>;
  /** run the handler on a piscina pool of this many threads */
  pool?: number;
  /** false: no finished-job history (to price the default); undefined: the default */
  keepDone?: false;
  /** startActors actorNice (undefined: its default) */
  actorNice?: number;
  /** startActors timeoutMs */
  timeoutMs?: number;
  /** burst: start the actors only once every message is in, and time the drain from the call */
  coldStart?: boolean;
  /** measure the idle actors for this long, from 1 s after ready (0: only wait that second) */
  idleMs?: number;
  /** name the jobs job.0 … job.<n−1> in turn, routed by a command table handler */
  names?: number;
}

/**
 * What publishing every event costs: SKYQ_BENCH_EVENTS=1 runs producer and actors with
 * `events: true` (done and dead are published either way).
 */
const eventsOption = (): { events?: true } =>
  process.env.SKYQ_BENCH_EVENTS === '1' ? { events: true } : {};

/** A loopback server's URL, or the masters of a loopback cluster (bench/cluster-scale.ts). */
export type SkyqTarget = string | { cluster: { host: string; port: number }[] };

export async function runSkyq(
  target: SkyqTarget,
  workload: WorkloadOptions,
  options: SkyqRunOptions = {},
  onProgress?: Progress,
): Promise<BenchResult> {
  const nodes = typeof target === 'string' ? null : target.cluster;
  const urls = nodes ? nodes.map((n) => `redis://${n.host}:${n.port}`) : [target as string];
  for (const url of urls) assertLoopback(url);
  const history = {
    ...(options.keepDone === false ? { keepDone: false as const } : {}),
    ...eventsOption(),
  };
  const where = { ...(nodes ? { cluster: nodes } : { redis: target as string }), ...history };
  const groups = options.shape?.actors ?? 10;
  const queue = new Queue({ ...where, groups });
  // One per server: a cluster's figures are each master's, and their sum. A server that does not
  // answer is the queue's to report, in one line (`skyq bench`): these would print each retry.
  const monitors = urls.map((url) => new Redis(url).on('error', () => undefined));
  const monitor = monitors[0] as Redis;
  const logs = tempLogDir();
  const tracker = new RunTracker(workload, onProgress);
  // Generated ids (the fast path) mapped back to the workload's own ids.
  const planned = new Map<string, string>();
  // A message due at once can start before addBulk has returned its id.
  const early = new Map<string, [dueAt: number, start: number]>();
  const starts = listenForStarts(groups, (id, dueAt, start) => {
    const own = planned.get(id);
    if (own === undefined) early.set(id, [dueAt, start]);
    else tracker.handled(own, dueAt, start);
  });
  const startOptions: StartOptions = {
    ...where,
    groups,
    handler: options.pool
      ? BENCH_POOL_HANDLER
      : options.names
        ? BENCH_NAMED_HANDLER
        : BENCH_HANDLER,
    logDir: logs.dir,
    ...history,
    ...definedOnly({
      concurrency: options.shape?.concurrency,
      batch: options.shape?.batch,
      pool: options.pool,
      timeoutMs: options.timeoutMs,
      actorNice: options.actorNice,
    }),
  };
  // Names by the workload's own id, so each run names the same messages alike.
  const nameOf = ({ id }: { id: string }) =>
    options.names ? { name: `job.${Number(id) % options.names}` } : {};
  let launcher: Launcher | undefined;
  try {
    await queue.ready();
    const body = makeBody(workload.bodyBytes);
    for (const chunk of backlogChunks(workload)) {
      await queue.addBulk(chunk.map((m) => ({ body, options: { delay: m.delayMs } })));
    }
    const later = consumeAfterAdding(workload);
    let startup: StartCost | undefined;
    let idleCores: number | undefined;
    if (tracker.consumes && !(later && options.coldStart)) {
      ({ launcher, cost: startup } = await timedStart({ ...startOptions, paused: later }));
      // Threads that just started keep compiling for a moment: measure the queue, not that.
      await sleep(IDLE_AFTER_READY_MS);
      if (options.idleMs && !later) idleCores = (await measureIdle(monitor, options.idleMs)).cores;
    }
    const before = await Promise.all(monitors.map(redisFigures));
    const windowStart = monotonicUs();
    await produce(workload, async (batch) => {
      const dues = tracker.adding(batch);
      const ids = await queue.addBulk(
        batch.map((_, i) => ({
          body,
          options: { runAt: dues[i] as number, ...nameOf(batch[i] as { id: string }) },
        })),
      );
      tracker.added(batch);
      ids.forEach((id, i) => {
        const own = (batch[i] as { id: string }).id;
        planned.set(id, own);
        const times = early.get(id);
        if (times) {
          early.delete(id);
          tracker.handled(own, ...times);
        }
      });
    });
    if (tracker.consumes && later) {
      tracker.consumersReleased();
      if (launcher) await launcher.resume();
      else ({ launcher, cost: startup } = await timedStart(startOptions));
    }
    const graceMs = workload.graceMs ?? DEFAULT_GRACE_MS;
    const complete = await tracker.drained(graceMs);
    const windowUs: [number, number] = [windowStart, monotonicUs()];
    const after = await Promise.all(monitors.map(redisFigures));
    const perServer = after.map((a, i) => diffFigures(before[i] as RedisFigures, a));
    const notes = complete
      ? []
      : [`stopped ${graceMs / 1000} s after the last due time; the rest counts as lost`];
    const result = tracker.result('skyq', sumFigures(perServer), notes);
    const redisCpuSecondsByServer = nodes ? perServer.map((f) => f.cpuSeconds) : undefined;
    const actorP99 = launcher ? await actorLatenessP99(launcher).catch(() => Number.NaN) : NaN;
    return {
      ...result,
      startup,
      idleCores,
      actorLatenessP99: actorP99,
      windowUs,
      ...(redisCpuSecondsByServer ? { redisCpuSecondsByServer } : {}),
    };
  } finally {
    starts.close();
    await launcher?.stop(1000);
    await queue.close();
    for (const m of monitors) await m.quit().catch(() => m.disconnect());
    logs.remove();
  }
}

/** µs on the monotonic clock V8's CPU profiles stamp their samples with (Linux: both CLOCK_MONOTONIC). */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(values).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}
