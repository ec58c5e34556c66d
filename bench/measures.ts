/**
 * The measuring kit every runner shares: lateness (with how many starts came early and how early
 * the earliest was), the exactly-once accounting of ids, and Redis's own figures from INFO.
 */
import { build, type Histogram } from 'hdr-histogram-js';
import type { Redis } from 'ioredis';

export interface LatenessSummary {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/** Handler starts before their due time: how many, and the earliest one's lead in ms. */
export interface EarlyStarts {
  count: number;
  /** ms before the due time of the earliest start; 0 when none was early */
  maxMs: number;
}

/** Lateness in ms, stored in µs so sub-ms differences survive; an early start records as 0. */
export class LatenessRecorder {
  private readonly h: Histogram = build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  private earlyCount = 0;
  private earliestMs = 0;

  record(ms: number): void {
    if (ms < 0) {
      this.earlyCount++;
      this.earliestMs = Math.max(this.earliestMs, -ms);
    }
    this.h.recordValue(Math.max(0, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.h.totalCount;
  }

  get early(): EarlyStarts {
    return { count: this.earlyCount, maxMs: this.earliestMs };
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

/**
 * Every expected id must be handled exactly once; anything else is a duplicate, lost or stray.
 * The workloads' ids are "0" … "n-1", so the books are arrays indexed by id: a Map per id was a
 * quarter of the producer thread's time in the seed (the thread whose speed is measured).
 */
export class Accounting {
  /** due ms by id; NaN: not expected */
  private readonly due: Float64Array;
  private readonly times: Uint32Array;
  private expected = 0;
  handled = 0;
  duplicates = 0;
  unexpected = 0;

  constructor(size: number) {
    this.due = new Float64Array(size).fill(Number.NaN);
    this.times = new Uint32Array(size);
  }

  /** The index of a workload id, or -1 for any other text. */
  indexOf(id: string): number {
    const index = Number(id);
    return Number.isInteger(index) && index >= 0 && index < this.due.length && String(index) === id
      ? index
      : -1;
  }

  expect(index: number, dueMs: number): void {
    if (Number.isNaN(this.due[index] as number)) this.expected++;
    this.due[index] = dueMs;
  }

  dueOf(index: number): number {
    return this.due[index] as number;
  }

  /** Counts one handling of `id`; 'first' only for the first handling of an expected id. */
  record(index: number): 'first' | 'duplicate' | 'unexpected' {
    if (index < 0 || Number.isNaN(this.due[index] as number)) {
      this.unexpected++;
      return 'unexpected';
    }
    const n = this.times[index] as number;
    this.times[index] = n + 1;
    if (n > 0) {
      this.duplicates++;
      return 'duplicate';
    }
    this.handled++;
    return 'first';
  }

  summary(): { handled: number; duplicates: number; lost: number; unexpected: number } {
    const { handled, duplicates, unexpected } = this;
    return { handled, duplicates, lost: this.expected - handled, unexpected };
  }
}

export interface RedisFigures {
  /** total calls over every cmdstat_* line (commands a Lua script runs count too) */
  calls: number;
  /** EVALSHA, EVAL and FCALL calls (and their _RO forms): script calls that crossed the network */
  scriptCalls: number;
  cpuSeconds: number;
  usedMemory: number;
}

const SCRIPT_COMMANDS = /^cmdstat_(?:evalsha|eval|fcall)(?:_ro)?:calls=(\d+)/gm;

/** One INFO call (counted in the next snapshot's delta: one command per run, noise). */
export async function redisFigures(client: Pick<Redis, 'info'>): Promise<RedisFigures> {
  const info = await client.info('all');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
  let scriptCalls = 0;
  for (const m of info.matchAll(SCRIPT_COMMANDS)) scriptCalls += Number(m[1]);
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
  const cpuSeconds = field('used_cpu_sys') + field('used_cpu_user');
  return { calls, scriptCalls, cpuSeconds, usedMemory: field('used_memory') };
}

export function diffFigures(before: RedisFigures, after: RedisFigures): RedisFigures {
  return {
    calls: after.calls - before.calls,
    scriptCalls: after.scriptCalls - before.scriptCalls,
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    usedMemory: after.usedMemory - before.usedMemory,
  };
}

/** Several servers' figures as one (a cluster's masters). */
export function sumFigures(all: RedisFigures[]): RedisFigures {
  const sum = { calls: 0, scriptCalls: 0, cpuSeconds: 0, usedMemory: 0 };
  for (const f of all) {
    sum.calls += f.calls;
    sum.scriptCalls += f.scriptCalls;
    sum.cpuSeconds += f.cpuSeconds;
    sum.usedMemory += f.usedMemory;
  }
  return sum;
}

/** CPU seconds of this process (every thread) since `start`. */
export function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}
