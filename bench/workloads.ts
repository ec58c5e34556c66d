/**
 * Workloads shared by every system under comparison (naive sorted set, BullMQ, bee-queue, skyq).
 * Each runner only knows how to add and consume in its own system; the shape of the load, the
 * clock and the result live here (the measuring kit in measures.ts) so the figures compare.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../src/base/errors.js';
import type { EarlyStarts, LatenessSummary } from './measures.js';

export type WorkloadName = 'seed' | 'burst' | 'steady' | 'memory';
export const WORKLOAD_NAMES: readonly WorkloadName[] = ['seed', 'burst', 'steady', 'memory'];

export interface WorkloadOptions {
  name: WorkloadName;
  /** messages to add; steady derives its count from rate × durationMs instead */
  count: number;
  /** each message is due a uniform random 0..spreadMs after its anchor (seed 5000, steady 1000) */
  spreadMs: number;
  /**
   * what the delays count from: each message's own add ('add', the default), or the run's first
   * add ('first-add': seed, whose producer makes each message due `start + rand(0..5 s)`).
   */
  anchor?: 'add' | 'first-add';
  /**
   * first-add only: 'made' hands messages over in the order the producer makes them (random due
   * order, as the seed's producer does and users copy: the default); 'due' sorts them by due
   * time first, as a timer source would. In random order a producer taking P s to add them all
   * leaves 1 % at least P − √(0.1·P) s late (issue 18), so lateness from due measures the
   * producer's rate; lateness from max(due, added) measures the queue.
   */
  order?: 'made' | 'due';
  /** added to every delay: memory uses one hour so nothing becomes due while we measure */
  delayMs?: number;
  /** steady: messages added per second */
  rate?: number;
  /** steady: how long the producer runs */
  durationMs?: number;
  /** payload size: memory per message depends on it */
  bodyBytes: number;
  /** far-future messages added before the clock starts: a large delayed set must not slow claims */
  backlog: number;
  /** how long past the last due time a run may go on before the rest counts as lost (120 s) */
  graceMs?: number;
  /** messages per add call (one addBulk / pipeline); default ADD_CHUNK */
  chunk?: number;
}

export function defaultWorkload(name: WorkloadName): WorkloadOptions {
  const base = { name, bodyBytes: 100, backlog: 0 };
  switch (name) {
    case 'seed': // the write-up's test: 100,000 messages due over the 5 s after the first add,
      // added in the order they are made (random due order)
      return { ...base, count: 100_000, spreadMs: 5_000, anchor: 'first-add', order: 'made' };
    case 'burst': // everything due as soon as it is added: pure drain throughput
      return { ...base, count: 100_000, spreadMs: 0 };
    case 'steady': // production-like: a constant stream with short delays
      return { ...base, count: 0, spreadMs: 1_000, rate: 2_000, durationMs: 30_000 };
    case 'memory': // what a pending message costs in Redis
      return { ...base, count: 100_000, spreadMs: 0, delayMs: 3_600_000 };
  }
}

/** Burst measures draining a full queue: consumers wait until every message is in. */
export const consumeAfterAdding = (w: WorkloadOptions): boolean => w.name === 'burst';

/** How many measured messages a workload adds (backlog excluded). */
export function messageCount(w: WorkloadOptions): number {
  if (w.name !== 'steady') return w.count;
  return Math.floor(((w.rate ?? 0) * (w.durationMs ?? 0)) / 1000);
}

export interface BenchResult {
  system: string;
  workload: WorkloadName;
  messages: number;
  enqueueSeconds: number;
  enqueueRate: number;
  /**
   * first due time (or the consumers' release, when later) → last handler start: what drainRate
   * divides by (NaN for memory)
   */
  drainSeconds: number;
  /** handled ÷ drainSeconds */
  drainRate: number;
  /** first add → last handler start (NaN for memory) */
  totalSeconds: number;
  /** ms, handler start − due time; NaN when nothing was handled. Early starts count as 0 here */
  lateness: LatenessSummary;
  /**
   * ms, handler start − max(due time, add acknowledged): what the queue adds once it has the
   * message. In random due order a message due before it was added is late by the producer alone.
   */
  latenessSinceAdded: LatenessSummary;
  /** handler starts before their due time, and how early the earliest was */
  early: EarlyStarts;
  /** INFO commandstats delta ÷ messages; commands run inside Lua scripts count too */
  commandsPerMessage: number;
  /** EVALSHA + EVAL (+ FCALL) calls ÷ messages: script calls that crossed the network */
  scriptCallsPerMessage: number;
  /** INFO cpu used_cpu_sys + used_cpu_user delta */
  redisCpuSeconds: number;
  /** CPU of this process, every thread (producer, consumers, bookkeeping), first add → end */
  nodeCpuSeconds: number;
  /** the consumers' start: skyq's startActors, the peers' workers until ready */
  startup?: { seconds: number; cpuSeconds: number };
  /** cores the started, idle consumers used (skyq: from 1 s after ready) */
  idleCores?: number;
  /**
   * skyq: first add → drained on the monotonic clock, µs: `profile-top.js --window a:b` keeps the
   * CPU-profile samples inside it (start-up's compiling left out)
   */
  windowUs?: [number, number];
  /** skyq on a cluster: each master's INFO cpu delta, in the order of the nodes given */
  redisCpuSecondsByServer?: number[];
  /** skyq: the actors' own lateness p99 (ms), from launcher.stats(), to set beside the measured */
  actorLatenessP99?: number;
  /** memory workload: INFO memory used_memory delta ÷ pending messages */
  bytesPerMessage?: number;
  handled: number;
  duplicates: number;
  lost: number;
  /** anything a reader must know to trust the row (deadline hit, unexpected ids, …) */
  notes?: string[];
}

export type Progress = (done: number, expected: number) => void;
export type SystemRunner = (
  redisUrl: string,
  workload: WorkloadOptions,
  onProgress?: Progress,
) => Promise<BenchResult>;

/** Backlog messages are due in a day: present in the delayed set, never due during a run. */
export const BACKLOG_DELAY_MS = 86_400_000;
/** Every runner adds in chunks of this size (one pipeline / addBulk per chunk). */
export const ADD_CHUNK = 1_000;
const STEADY_TICK_MS = 10;
/**
 * Every run stops by itself this long after its last due time, whatever is still pending. 120 s,
 * not 60: on a 2-core box the naive loop needs ~75 s for 100,000 messages, and cutting it short
 * would report slowness as loss; a full run still ends well within 3 minutes.
 */
export const DEFAULT_GRACE_MS = 120_000;

/** Wall clock in ms with sub-ms precision, comparable with Date.now()-based due times. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export const makeBody = (bytes: number): string => 'x'.repeat(bytes);

/** Refuse anything but loopback: these runners flood the server they are given. */
export function assertLoopback(redisUrl: string): void {
  const host = new URL(redisUrl).hostname.replace(/^\[|\]$/g, '');
  if (!/^(127\.\d+\.\d+\.\d+|localhost|::1)$/.test(host)) {
    // A SkyqError: the CLI prints it as one line, and the URL's password is masked.
    throw errors.invalidOption(
      'redis',
      'benchmarks only run against a loopback redis-server (127.x.x.x, localhost or ::1)',
      redisUrl,
    );
  }
}

export interface Planned {
  id: string;
  /** ms after the message's anchor (its own add, or the run's first: WorkloadOptions.anchor) */
  delayMs: number;
}

// A fixed-seed PRNG gives every system the same sequence of delays, run after run.
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Backlog chunks, ids `b0…`; none of them is expected to be handled. */
export function* backlogChunks(w: WorkloadOptions): Generator<Planned[]> {
  const chunk = w.chunk ?? ADD_CHUNK;
  for (let i = 0; i < w.backlog; i += chunk) {
    const n = Math.min(chunk, w.backlog - i);
    yield Array.from({ length: n }, (_, k) => ({ id: `b${i + k}`, delayMs: BACKLOG_DELAY_MS }));
  }
}

/**
 * Hands the workload's messages (ids "0", "1", …) to `send`, awaiting each chunk: seed, burst and
 * memory as fast as the system takes them; steady as `rate`/s in 10 ms ticks, catching up if a
 * tick ran long so the offered load stays what was asked.
 */
export async function produce(
  w: WorkloadOptions,
  send: (batch: Planned[]) => Promise<void>,
): Promise<void> {
  const rand = mulberry32(0x5eed);
  const total = messageCount(w);
  let next = 0;
  const delay = () => (w.delayMs ?? 0) + Math.floor(rand() * (w.spreadMs + 1));
  // Anchored at the first add and sorted, messages go out in due order (WorkloadOptions.order).
  const sorted =
    w.anchor === 'first-add' && w.order === 'due'
      ? Array.from({ length: total }, delay).sort((a, b) => a - b)
      : null;
  const take = (n: number): Planned[] =>
    Array.from({ length: n }, () => {
      const id = next++;
      return { id: String(id), delayMs: sorted ? (sorted[id] as number) : delay() };
    });
  if (w.name !== 'steady') {
    const chunk = w.chunk ?? ADD_CHUNK;
    while (next < total) await send(take(Math.min(chunk, total - next)));
    return;
  }
  const start = performance.now();
  const rate = w.rate ?? 0;
  while (next < total) {
    const due = Math.min(total, Math.floor((rate * (performance.now() - start)) / 1000));
    if (due > next) await send(take(due - next));
    // Sleep to the next tick boundary, so a slow send shortens the wait instead of adding to it.
    if (next < total) await sleep(STEADY_TICK_MS - ((performance.now() - start) % STEADY_TICK_MS));
  }
}
