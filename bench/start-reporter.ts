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

/**
 * One batch of starts as it travels: the ids joined by newlines (no id skyq generates or the
 * bench adds holds one) and dueAt, start pairs. One string and one typed array clone for the
 * price of a copy; an array of three values a start cost the actors and the bench's thread a
 * structured clone per value.
 */
export interface StartBatch {
  ids: string;
  times: Float64Array;
}

/** A no-op handler that reports each start; `schedule` decides when a batch goes out. */
export function startReporter(schedule: (flush: () => void) => void): (job: Message) => void {
  // An actor thread serves one group; a pool thread serves them all.
  const channels = new Map<number, BroadcastChannel>();
  /** per group: ids, and dueAt, start for each */
  const started = new Map<number, { ids: string[]; times: number[] }>();
  let flushPending = false;
  const flush = () => {
    flushPending = false;
    for (const [group, { ids, times }] of started) {
      const batch: StartBatch = { ids: ids.join('\n'), times: Float64Array.from(times) };
      channels.get(group)?.postMessage(batch);
    }
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
      batch = { ids: [], times: [] };
      started.set(job.group, batch);
    }
    batch.ids.push(job.id);
    batch.times.push(job.dueAt, performance.timeOrigin + performance.now());
    if (!flushPending) {
      flushPending = true;
      schedule(flush);
    }
  };
}
