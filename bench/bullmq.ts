/**
 * The same workloads through BullMQ, the queue most Node users would pick instead of skyq.
 * Used the way its docs suggest (addBulk, delayed jobs, removeOnComplete, Worker concurrency),
 * with a no-op processor so what we time is the queue, not the work.
 */
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { cpuSince, diffFigures, redisFigures } from './measures.js';
import { RunTracker } from './tracker.js';
import {
  assertLoopback,
  type BenchResult,
  backlogChunks,
  consumeAfterAdding,
  DEFAULT_GRACE_MS,
  makeBody,
  type Planned,
  type Progress,
  produce,
  type WorkloadOptions,
} from './workloads.js';

export const BULLMQ_QUEUE = 'skyq-bench';

/** How the consumers are laid out: one worker with many slots, or many workers with few. */
export interface BullmqShape {
  workers: number;
  concurrency: number;
}

interface JobData {
  id: string;
  body: string;
}

export const bullmqSystemName = (s: BullmqShape): string => `bullmq-${s.workers}x${s.concurrency}`;

export async function runBullmq(
  redisUrl: string,
  workload: WorkloadOptions,
  shape: BullmqShape = { workers: 1, concurrency: 100 },
  onProgress?: Progress,
): Promise<BenchResult> {
  assertLoopback(redisUrl);
  const url = new URL(redisUrl);
  // BullMQ insists on maxRetriesPerRequest: null for its blocking connections; a private server
  // that goes away is not coming back, so no reconnect loop either.
  const connection = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || 6379),
    maxRetriesPerRequest: null,
    retryStrategy: () => null,
  };
  const queue = new Queue<JobData>(BULLMQ_QUEUE, {
    connection,
    defaultJobOptions: { removeOnComplete: true },
  });
  const monitor = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  const workers: Worker<JobData>[] = [];
  let stopping = false;
  try {
    await Promise.all([queue.waitUntilReady(), monitor.connect()]);
    const body = makeBody(workload.bodyBytes);
    const toJobs = (batch: Planned[], dues: number[]) => {
      const now = Date.now();
      return batch.map((m, i) => ({
        name: 'm',
        data: { id: m.id, body },
        opts: { delay: Math.max(0, (dues[i] as number) - now) },
      }));
    };
    for (const chunk of backlogChunks(workload)) {
      await queue.addBulk(
        toJobs(
          chunk,
          chunk.map((m) => Date.now() + m.delayMs),
        ),
      );
    }

    const tracker = new RunTracker(workload, onProgress);
    let startup: BenchResult['startup'];
    if (tracker.consumes) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      // Lateness against BullMQ's own due time (timestamp + delay), taken at handler start.
      const processor = async (job: Job<JobData>) => {
        tracker.handled(job.data.id, job.timestamp + (job.opts.delay ?? 0));
      };
      for (let i = 0; i < shape.workers; i++) {
        const worker = new Worker<JobData>(BULLMQ_QUEUE, processor, {
          connection,
          concurrency: shape.concurrency,
          autorun: !consumeAfterAdding(workload),
        });
        // An unhandled 'error' would crash the process; a real one ends the run instead.
        worker.on('error', (err) => {
          if (!stopping) tracker.fail(err);
        });
        workers.push(worker);
      }
      // Connected and polling before the clock starts, like long-running consumers would be.
      await Promise.all(workers.map((w) => w.waitUntilReady()));
      startup = { seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSince(cpu) };
    }
    const before = await redisFigures(monitor);
    await produce(workload, async (batch) => {
      await queue.addBulk(toJobs(batch, tracker.adding(batch)));
      tracker.added(batch);
    });
    if (tracker.consumes && consumeAfterAdding(workload)) {
      tracker.consumersReleased();
      for (const worker of workers) void worker.run().catch((err) => tracker.fail(err));
    }
    const graceMs = workload.graceMs ?? DEFAULT_GRACE_MS;
    const complete = await tracker.drained(graceMs);
    const after = await redisFigures(monitor);
    const notes = complete
      ? []
      : [`stopped ${graceMs / 1000} s after the last due time; the rest counts as lost`];
    return {
      ...tracker.result(bullmqSystemName(shape), diffFigures(before, after), notes),
      startup,
    };
  } finally {
    stopping = true;
    // force: every job is done or abandoned by now; waiting on in-flight ones only adds time.
    await Promise.allSettled(workers.map((w) => w.close(true)));
    await Promise.allSettled([queue.close()]);
    await monitor.quit().catch(() => monitor.disconnect());
  }
}
