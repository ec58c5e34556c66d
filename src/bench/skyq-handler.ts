// The no-op handler `skyq bench` runs in the actors. It only tells the bench
// which message started when, in batches over a BroadcastChannel (one message
// per job would cost more than the job itself).
import { performance } from 'node:perf_hooks';
import { BroadcastChannel } from 'node:worker_threads';
import type { Message } from '../message.js';

export const BENCH_CHANNEL = 'skyq-bench';
const FLUSH_MS = 5;

const channel = new BroadcastChannel(BENCH_CHANNEL);
channel.unref();
/** id, dueAt, start, id, dueAt, start, … */
let started: (string | number)[] = [];
let flushPending = false;

function flush(): void {
  flushPending = false;
  channel.postMessage(started);
  started = [];
}

export default function benchHandler(job: Message): void {
  started.push(job.id, job.dueAt, performance.timeOrigin + performance.now());
  if (!flushPending) {
    flushPending = true;
    setTimeout(flush, FLUSH_MS);
  }
}
