/**
 * The design users copy today (DESIGN.md "Where it comes from", 1): one sorted set scored by due
 * time, ten consumers that each poll `ZRANGEBYSCORE key 0 now LIMIT 0 1` then race on `ZREM`, and
 * a one-second sleep whenever a poll comes back empty. Reproduced faithfully, not improved: it
 * is the baseline skyq's claims, leases and blocking waits are measured against.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { diffFigures, redisFigures } from './measures.js';
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

export const NAIVE_KEY = 'naive:delayed';
export const NAIVE_CONSUMERS = 10;
const EMPTY_POLL_SLEEP_MS = 1_000;

type Pipeline = ReturnType<Redis['pipeline']>;

async function execOrThrow(p: Pipeline): Promise<void> {
  for (const [err] of (await p.exec()) ?? []) if (err) throw err;
}

// Member = "id:body": the id keeps members unique (ZADD would otherwise merge equal payloads)
// and lets the consumer account for what it handled.
const idOf = (member: string): string => member.slice(0, member.indexOf(':'));

async function zaddChunk(c: Redis, batch: Planned[], dues: number[], body: string): Promise<void> {
  // One ZADD per message, as the original producer does, but pipelined per chunk so the
  // producer is not bound by round trips (BullMQ's addBulk gets the same favour).
  const p = c.pipeline();
  batch.forEach((m, i) => {
    p.zadd(NAIVE_KEY, dues[i] ?? 0, `${m.id}:${body}`);
  });
  await execOrThrow(p);
}

async function consume(c: Redis, tracker: RunTracker, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    const [member] = await c.zrangebyscore(NAIVE_KEY, 0, Date.now(), 'LIMIT', 0, 1);
    if (member === undefined) {
      // The sleep that makes this design late; an abort only cuts it short at the end of a run.
      await sleep(EMPTY_POLL_SLEEP_MS, undefined, { signal: stop }).catch(() => {});
      continue;
    }
    // Whoever removes the member owns it; the losers of the race just poll again.
    if ((await c.zrem(NAIVE_KEY, member)) === 1) tracker.handled(idOf(member));
  }
}

export async function runNaive(
  redisUrl: string,
  workload: WorkloadOptions,
  onProgress?: Progress,
): Promise<BenchResult> {
  assertLoopback(redisUrl);
  // Each consumer on its own connection, as separate services would be; no auto-pipelining,
  // which would batch the consumers' polls into one write and flatter the design.
  const open = () => new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  const producer = open();
  const monitor = open();
  const consumers = Array.from({ length: NAIVE_CONSUMERS }, open);
  const clients = [producer, monitor, ...consumers];
  const stop = new AbortController();
  let loops: Promise<void>[] = [];
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const body = makeBody(workload.bodyBytes);
    for (const chunk of backlogChunks(workload)) {
      const due = Date.now() + (chunk[0]?.delayMs ?? 0);
      await zaddChunk(
        producer,
        chunk,
        chunk.map(() => due),
        body,
      );
    }
    const tracker = new RunTracker(workload, onProgress);
    const before = await redisFigures(monitor);
    const startConsumers = () => {
      loops = consumers.map((c) =>
        consume(c, tracker, stop.signal).catch((err) => {
          if (!stop.signal.aborted) tracker.fail(err);
        }),
      );
    };
    const later = consumeAfterAdding(workload);
    if (tracker.consumes && !later) startConsumers();
    await produce(workload, async (batch) => {
      await zaddChunk(producer, batch, tracker.adding(batch), body);
      tracker.added(batch);
    });
    if (tracker.consumes && later) {
      tracker.consumersReleased();
      startConsumers();
    }
    const graceMs = workload.graceMs ?? DEFAULT_GRACE_MS;
    const complete = await tracker.drained(graceMs);
    stop.abort();
    await Promise.all(loops);
    const after = await redisFigures(monitor);
    const notes = complete
      ? []
      : [`stopped ${graceMs / 1000} s after the last due time; the rest counts as lost`];
    return tracker.result('naive', diffFigures(before, after), notes);
  } finally {
    stop.abort();
    await Promise.all(loops);
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
