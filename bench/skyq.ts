// skyq under the bench's workloads: a Queue adds with addBulk, the real actor
// runtime (one thread per group) consumes with a no-op handler that reports
// each start over a BroadcastChannel, so lateness is measured at handler start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { type Launcher, Queue, startActors } from '../src/index.js';
import { benchChannel } from './skyq-handler.js';
import { RunTracker } from './tracker.js';
import {
  assertLoopback,
  type BenchResult,
  backlogChunks,
  consumeAfterAdding,
  DEFAULT_GRACE_MS,
  diffFigures,
  makeBody,
  type Progress,
  produce,
  redisFigures,
  type WorkloadOptions,
} from './workloads.js';

export interface SkyqShape {
  actors: number;
  concurrency: number;
  batch: number;
}

export const DEFAULT_SKYQ_SHAPE: SkyqShape = { actors: 10, concurrency: 500, batch: 500 };

export async function runSkyq(
  redisUrl: string,
  workload: WorkloadOptions,
  shape: SkyqShape = DEFAULT_SKYQ_SHAPE,
  onProgress?: Progress,
): Promise<BenchResult> {
  assertLoopback(redisUrl);
  const queue = new Queue({ redis: redisUrl, groups: shape.actors });
  const monitor = new Redis(redisUrl);
  const channels = Array.from(
    { length: shape.actors },
    (_, g) => new BroadcastChannel(benchChannel(g)),
  );
  const logDir = mkdtempSync(join(tmpdir(), 'skyq-bench-logs-'));
  let launcher: Launcher | undefined;
  try {
    await queue.ready();
    const body = makeBody(workload.bodyBytes);
    for (const chunk of backlogChunks(workload)) {
      await queue.addBulk(chunk.map((m) => ({ body, options: { delay: m.delayMs } })));
    }
    const tracker = new RunTracker(workload, onProgress);
    // Generated ids (the fast path) mapped back to the workload's own ids.
    const planned = new Map<string, string>();
    // A message due at once can start before addBulk has returned its id.
    const early = new Map<string, [dueAt: number, start: number]>();
    const onStarted = (event: unknown) => {
      const started = (event as MessageEvent).data as (string | number)[];
      for (let i = 0; i < started.length; i += 3) {
        const id = planned.get(started[i] as string);
        const times: [number, number] = [started[i + 1] as number, started[i + 2] as number];
        if (id === undefined) early.set(started[i] as string, times);
        else tracker.handled(id, ...times);
      }
    };
    for (const channel of channels) channel.onmessage = onStarted;
    if (tracker.consumes) {
      launcher = await startActors({
        redis: redisUrl,
        groups: shape.actors,
        concurrency: shape.concurrency,
        batch: shape.batch,
        handler: new URL('./skyq-handler.js', import.meta.url).href,
        logDir,
        publishStats: false,
        paused: consumeAfterAdding(workload),
      });
    }
    // Ten threads that just loaded their modules keep compiling and collecting for a
    // second or two: measure the queue, not the warm-up.
    if (launcher) await settle();
    const before = await redisFigures(monitor);
    await produce(workload, async (batch) => {
      const dues = tracker.adding(batch);
      const ids = await queue.addBulk(
        batch.map((_, i) => ({ body, options: { runAt: dues[i] as number } })),
      );
      ids.forEach((id, i) => {
        const own = (batch[i] as { id: string }).id;
        planned.set(id, own);
        const times = early.get(id);
        if (times) {
          early.delete(id);
          tracker.handled(own, ...times);
        }
      });
      tracker.added(batch.length);
    });
    if (launcher && consumeAfterAdding(workload)) {
      tracker.consumersReleased();
      await launcher.resume();
    }
    const graceMs = workload.graceMs ?? DEFAULT_GRACE_MS;
    const complete = await tracker.drained(graceMs);
    const after = await redisFigures(monitor);
    const notes = complete
      ? []
      : [`stopped ${graceMs / 1000} s after the last due time; the rest counts as lost`];
    return tracker.result('skyq', diffFigures(before, after), notes);
  } finally {
    for (const channel of channels) channel.close();
    await launcher?.stop(1000);
    await queue.close();
    await monitor.quit().catch(() => monitor.disconnect());
    rmSync(logDir, { recursive: true, force: true });
  }
}

/** Waits until this process uses under a fifth of a core (at most 5 s). */
async function settle(): Promise<void> {
  const deadline = Date.now() + 5000;
  let last = process.cpuUsage();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const used = process.cpuUsage(last);
    last = process.cpuUsage();
    if ((used.user + used.system) / 1000 < 200 * 0.2) return;
  }
}
