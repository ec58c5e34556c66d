// The no-op handler `skyq bench` runs in the actors. It only tells the bench
// which message started when, in batches over a BroadcastChannel (one message
// per job would cost more than the job itself).
import { performance } from 'node:perf_hooks';
import { BroadcastChannel } from 'node:worker_threads';
import type { Message } from '../src/message.js';

/** One channel per group, so each report goes to the bench and not to every actor. */
export const benchChannel = (group: number) => `skyq-bench-${group}`;
const FLUSH_MS = 50;

let channel: BroadcastChannel | undefined;
/** id, dueAt, start, id, dueAt, start, … */
let started: (string | number)[] = [];
let flushPending = false;

function flush(): void {
  flushPending = false;
  channel?.postMessage(started);
  started = [];
}

export default function benchHandler(job: Message): void {
  if (!channel) {
    // Each actor thread serves one group: its own channel, opened on first use.
    channel = new BroadcastChannel(benchChannel(job.group));
    channel.unref();
  }
  started.push(job.id, job.dueAt, performance.timeOrigin + performance.now());
  if (!flushPending) {
    flushPending = true;
    setTimeout(flush, FLUSH_MS);
  }
}
