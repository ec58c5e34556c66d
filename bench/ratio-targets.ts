/**
 * Issue 26's targets, each a ratio to bee-queue measured in the same run (or, where it says so,
 * a figure of skyq's own): which workload, how the figure is read from a BenchResult, and the
 * bound. compare.ts takes the median of each system's rounds and judges the ratio of medians.
 */
import type { BenchResult, WorkloadName } from './workloads.js';

export type Bound = { atMost: number } | { atLeast: number };

export interface RatioTarget {
  workload: WorkloadName;
  figure: string;
  unit: string;
  read: (r: BenchResult) => number;
  /** the bound on skyq ÷ bee-queue; absent: judged on skyq's own figure */
  ratio?: Bound;
  /** the bound on skyq's own figure */
  own?: Bound;
  /** why the bound is what it is, when the issue says */
  note?: string;
}

const perMessageUs = (seconds: number, r: BenchResult) => (seconds * 1e6) / r.messages;
/** first add (or, for a burst, the consumers' start) → drained, their start-up included */
const drainWithStart = (r: BenchResult) => r.handled / (r.drainSeconds + (r.startup?.seconds ?? 0));

export const RATIO_TARGETS: RatioTarget[] = [
  {
    workload: 'seed',
    figure: 'producer adds/s while consuming',
    unit: '/s',
    read: (r) => r.enqueueRate,
    ratio: { atLeast: 1.5 },
  },
  {
    workload: 'seed',
    figure: 'lateness from due, p99',
    unit: 'ms',
    read: (r) => r.lateness.p99,
    ratio: { atMost: 0.6 },
  },
  {
    workload: 'seed',
    figure: 'lateness from max(due, added), p99',
    unit: 'ms',
    read: (r) => r.latenessSinceAdded.p99,
    own: { atMost: 20 },
  },
  {
    workload: 'seed',
    figure: 'first add → last handled',
    unit: 's',
    read: (r) => r.totalSeconds,
    own: { atMost: 5.3 },
  },
  {
    workload: 'seed',
    figure: 'Node CPU for the run',
    unit: 's',
    read: (r) => r.nodeCpuSeconds,
    ratio: { atMost: 0.6 },
  },
  {
    workload: 'seed',
    figure: 'Redis CPU for the run',
    unit: 's',
    read: (r) => r.redisCpuSeconds,
    ratio: { atMost: 0.5 },
  },
  {
    workload: 'seed',
    figure: 'lost + duplicates + early starts',
    unit: '',
    read: (r) => r.lost + r.duplicates + r.early.count,
    own: { atMost: 0 },
  },
  {
    workload: 'steady',
    figure: 'launcher CPU per message, start-up left out',
    unit: 'µs',
    read: (r) => perMessageUs(r.nodeCpuSeconds, r),
    ratio: { atMost: 1.5 },
    note: 'bee-queue runs its due jobs up to a second late; skyq must stay within 10 ms',
  },
  {
    workload: 'steady',
    figure: 'lateness from due, p99',
    unit: 'ms',
    read: (r) => r.lateness.p99,
    own: { atMost: 10 },
  },
  {
    workload: 'steady',
    figure: 'early starts',
    unit: '',
    read: (r) => r.early.count,
    own: { atMost: 0 },
  },
  {
    workload: 'burst',
    figure: 'drain rate, start-up included',
    unit: '/s',
    read: drainWithStart,
    ratio: { atLeast: 2.5 },
  },
  {
    workload: 'memory',
    figure: 'bytes per pending message',
    unit: 'B',
    read: (r) => r.bytesPerMessage ?? Number.NaN,
    ratio: { atMost: 0.65 },
  },
];

/** The workloads these targets need, in the order they run. */
export const TARGET_WORKLOADS: WorkloadName[] = ['seed', 'steady', 'burst', 'memory'];

export function within(value: number, bound: Bound): boolean {
  if (!Number.isFinite(value)) return false;
  return 'atMost' in bound ? value <= bound.atMost : value >= bound.atLeast;
}

export const boundText = (bound: Bound, unit = ''): string =>
  `${'atMost' in bound ? '≤' : '≥'} ${'atMost' in bound ? bound.atMost : bound.atLeast}${unit ? ` ${unit}` : ''}`;

/** The median of finite values (NaN when there are none). */
export function median(values: number[]): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = Math.floor(finite.length / 2);
  return finite.length % 2
    ? (finite[mid] as number)
    : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}
