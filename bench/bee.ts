/**
 * The same workloads through bee-queue 2.0, the "simple, fast" Redis queue. Used the way its
 * README suggests for throughput: a producer queue with isWorker off, worker queues with
 * removeOnSuccess, getEvents / sendEvents / storeJobs off, jobs saved in pipelines with saveAll,
 * delayed jobs by delayUntil with activateDelayedJobs on the workers (delayedDebounce left at
 * its default), and a no-op processor so what we time is the queue, not the work.
 */
import BeeQueue from 'bee-queue';
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

export const BEE_QUEUE = 'skyq-bench';

/** How the consumers are laid out: worker queues × jobs each runs at once. */
export interface BeeShape {
  workers: number;
  concurrency: number;
}

interface JobData {
  id: string;
  body: string;
}

export const beeSystemName = (s: BeeShape): string => `bee-${s.workers}x${s.concurrency}`;

const CLOSE_TIMEOUT_MS = 5_000;

export async function runBee(
  redisUrl: string,
  workload: WorkloadOptions,
  shape: BeeShape = { workers: 1, concurrency: 100 },
  onProgress?: Progress,
): Promise<BenchResult> {
  assertLoopback(redisUrl);
  const url = new URL(redisUrl);
  const redis = { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
  const quiet = { getEvents: false, sendEvents: false, storeJobs: false };
  const producer = new BeeQueue<JobData>(BEE_QUEUE, { redis, isWorker: false, ...quiet });
  const monitor = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  const workers: BeeQueue<JobData>[] = [];
  try {
    await Promise.all([producer.ready(), monitor.connect()]);
    const body = makeBody(workload.bodyBytes);
    const save = async (batch: Planned[], dues: number[]) => {
      const jobs = batch.map((m, i) =>
        producer.createJob({ id: m.id, body }).delayUntil(dues[i] as number),
      );
      const failed = await producer.saveAll(jobs);
      if (failed.size > 0) throw [...failed.values()][0];
    };
    for (const chunk of backlogChunks(workload)) {
      await save(
        chunk,
        chunk.map((m) => Date.now() + m.delayMs),
      );
    }
    const tracker = new RunTracker(workload, onProgress);
    let startup: BenchResult['startup'];
    if (tracker.consumes) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      for (let i = 0; i < shape.workers; i++) {
        const worker = new BeeQueue<JobData>(BEE_QUEUE, {
          redis,
          isWorker: true,
          removeOnSuccess: true,
          activateDelayedJobs: true,
          ...quiet,
        });
        worker.on('error', (err) => tracker.fail(err));
        workers.push(worker);
      }
      // Connected before the clock starts, like long-running consumers would be.
      await Promise.all(workers.map((w) => w.ready()));
      startup = { seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSince(cpu) };
    }
    const consume = () => {
      for (const worker of workers) {
        worker.process(shape.concurrency, async (job) => tracker.handled(job.data.id));
      }
    };
    const later = consumeAfterAdding(workload);
    if (!later) consume();
    const before = await redisFigures(monitor);
    await produce(workload, async (batch) => {
      await save(batch, tracker.adding(batch));
      tracker.added(batch);
    });
    if (tracker.consumes && later) {
      tracker.consumersReleased();
      consume();
    }
    const graceMs = workload.graceMs ?? DEFAULT_GRACE_MS;
    const complete = await tracker.drained(graceMs);
    const after = await redisFigures(monitor);
    const notes = complete
      ? []
      : [`stopped ${graceMs / 1000} s after the last due time; the rest counts as lost`];
    return { ...tracker.result(beeSystemName(shape), diffFigures(before, after), notes), startup };
  } finally {
    await Promise.allSettled([...workers, producer].map((q) => q.close(CLOSE_TIMEOUT_MS)));
    await monitor.quit().catch(() => monitor.disconnect());
  }
}
