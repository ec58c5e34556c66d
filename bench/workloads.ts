/**
 * Workloads and the measuring kit shared by every system under comparison (naive sorted set,
 * BullMQ, skyq). Each runner only knows how to add and consume in its own system; the shape of
 * the load, the clock, the accounting and the result live here so the figures stay comparable.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { build, type Histogram } from 'hdr-histogram-js';
import type { Redis } from 'ioredis';

export type WorkloadName = 'seed' | 'burst' | 'steady' | 'memory';
export const WORKLOAD_NAMES: readonly WorkloadName[] = ['seed', 'burst', 'steady', 'memory'];

export interface WorkloadOptions {
  name: WorkloadName;
  /** messages to add; steady derives its count from rate × durationMs instead */
  count: number;
  /** each message is due a uniform random 0..spreadMs after it is added (seed 5000, steady 1000) */
  spreadMs: number;
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
}

export function defaultWorkload(name: WorkloadName): WorkloadOptions {
  const base = { name, bodyBytes: 100, backlog: 0 };
  switch (name) {
    case 'seed': // the write-up's test: 100,000 messages due 0–5 s after they are added
      return { ...base, count: 100_000, spreadMs: 5_000 };
    case 'burst': // everything due as soon as it is added: pure drain throughput
      return { ...base, count: 100_000, spreadMs: 0 };
    case 'steady': // production-like: a constant stream with short delays
      return { ...base, count: 0, spreadMs: 1_000, rate: 2_000, durationMs: 30_000 };
    case 'memory': // what a pending message costs in Redis
      return { ...base, count: 100_000, spreadMs: 0, delayMs: 3_600_000 };
  }
}

/** How many measured messages a workload adds (backlog excluded). */
/** Burst measures draining a full queue: consumers wait until every message is in. */
export const consumeAfterAdding = (w: WorkloadOptions): boolean => w.name === 'burst';

export function messageCount(w: WorkloadOptions): number {
  if (w.name !== 'steady') return w.count;
  return Math.floor(((w.rate ?? 0) * (w.durationMs ?? 0)) / 1000);
}

export interface LatenessSummary {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export interface BenchResult {
  system: string;
  workload: WorkloadName;
  messages: number;
  enqueueSeconds: number;
  enqueueRate: number;
  /** handled per second, from the first due time to the last handler start (NaN for memory) */
  drainRate: number;
  /** first add → last handler start (NaN for memory) */
  totalSeconds: number;
  /** ms, handler start − due time; NaN when nothing was handled */
  lateness: LatenessSummary;
  /** INFO commandstats delta ÷ messages; commands run inside Lua scripts count too */
  commandsPerMessage: number;
  /** INFO cpu used_cpu_sys + used_cpu_user delta */
  redisCpuSeconds: number;
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
    throw new Error(`benchmarks only run against a loopback redis-server, not ${redisUrl}`);
  }
}

export interface Planned {
  id: string;
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
  for (let i = 0; i < w.backlog; i += ADD_CHUNK) {
    const n = Math.min(ADD_CHUNK, w.backlog - i);
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
  const take = (n: number): Planned[] =>
    Array.from({ length: n }, () => ({
      id: String(next++),
      delayMs: (w.delayMs ?? 0) + Math.floor(rand() * (w.spreadMs + 1)),
    }));
  if (w.name !== 'steady') {
    while (next < total) await send(take(Math.min(ADD_CHUNK, total - next)));
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

/** Lateness in ms, stored in µs so sub-ms differences survive; negatives clamp to 0. */
export class LatenessRecorder {
  private readonly h: Histogram = build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  /** handler starts before the due time (clock skew between client clocks); recorded as 0 */
  early = 0;

  record(ms: number): void {
    if (ms < 0) this.early++;
    this.h.recordValue(Math.max(0, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.h.totalCount;
  }

  summary(): LatenessSummary {
    if (this.h.totalCount === 0) return { p50: NaN, p99: NaN, p999: NaN, max: NaN, mean: NaN };
    // A percentile reads as its bucket's upper edge, which can pass the true max: cap it there.
    const max = this.h.maxValue;
    const at = (p: number) => Math.min(this.h.getValueAtPercentile(p), max) / 1000;
    return {
      p50: at(50),
      p99: at(99),
      p999: at(99.9),
      max: max / 1000,
      mean: this.h.mean / 1000,
    };
  }
}

/** Every expected id must be handled exactly once; anything else is a duplicate, lost or stray. */
export class Accounting {
  private readonly due = new Map<string, number>();
  private readonly times = new Map<string, number>();
  duplicates = 0;
  unexpected = 0;

  constructor(ids: Iterable<[id: string, dueMs: number]> = []) {
    for (const [id, dueMs] of ids) this.expect(id, dueMs);
  }

  expect(id: string, dueMs: number): void {
    this.due.set(id, dueMs);
  }

  dueOf(id: string): number | undefined {
    return this.due.get(id);
  }

  /** Counts one handling of `id`; 'first' only for the first handling of an expected id. */
  record(id: string): 'first' | 'duplicate' | 'unexpected' {
    if (!this.due.has(id)) {
      this.unexpected++;
      return 'unexpected';
    }
    const n = this.times.get(id) ?? 0;
    this.times.set(id, n + 1);
    if (n > 0) {
      this.duplicates++;
      return 'duplicate';
    }
    return 'first';
  }

  get handled(): number {
    return this.times.size;
  }

  summary(): { handled: number; duplicates: number; lost: number; unexpected: number } {
    const { handled, duplicates, unexpected } = this;
    return { handled, duplicates, lost: this.due.size - handled, unexpected };
  }
}

export interface RedisFigures {
  /** total calls over every cmdstat_* line */
  calls: number;
  cpuSeconds: number;
  usedMemory: number;
}

/** One INFO call (counted in the next snapshot's delta: one command per run, noise). */
export async function redisFigures(client: Pick<Redis, 'info'>): Promise<RedisFigures> {
  const info = await client.info('all');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
  const cpuSeconds = field('used_cpu_sys') + field('used_cpu_user');
  return { calls, cpuSeconds, usedMemory: field('used_memory') };
}

export function diffFigures(before: RedisFigures, after: RedisFigures): RedisFigures {
  return {
    calls: after.calls - before.calls,
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    usedMemory: after.usedMemory - before.usedMemory,
  };
}
