// What the benchmarks' no-op handlers do: tell the bench which message started when, in
// batches over a BroadcastChannel (one message per job would cost more than the job itself).
import { performance } from 'node:perf_hooks';
import { BroadcastChannel } from 'node:worker_threads';
import type { Message } from '../src/queue/message.js';

/**
 * One channel per group, so each report goes to the bench and not to every actor (a
 * BroadcastChannel delivers to every other instance of its name in the process).
 */
export const benchChannel = (group: number) => `skyq-bench-${group}`;

/** A no-op handler that reports each start; `schedule` decides when a batch goes out. */
export function startReporter(schedule: (flush: () => void) => void): (job: Message) => void {
  // An actor thread serves one group; a pool thread serves them all.
  const channels = new Map<number, BroadcastChannel>();
  /** per group: id, dueAt, start, id, dueAt, start, … */
  const started = new Map<number, (string | number)[]>();
  let flushPending = false;
  const flush = () => {
    flushPending = false;
    for (const [group, batch] of started) channels.get(group)?.postMessage(batch);
    started.clear();
  };
  return (job) => {
    let batch = started.get(job.group);
    if (!batch) {
      if (!channels.has(job.group)) {
        const channel = new BroadcastChannel(benchChannel(job.group));
        channel.unref();
        channels.set(job.group, channel);
      }
      batch = [];
      started.set(job.group, batch);
    }
    batch.push(job.id, job.dueAt, performance.timeOrigin + performance.now());
    if (!flushPending) {
      flushPending = true;
      schedule(flush);
    }
  };
}
