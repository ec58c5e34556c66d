/**
 * Plain-text tables of BenchResults: one row per figure, one column per system, and — once a
 * baseline system (skyq) is among them — one ratio column per other system. Shared by
 * bench/compare.ts and `skyq bench` so both print the same thing.
 */
import type { BenchResult } from './workloads.js';

type Kind = 'int' | 'num';

/** Early-start figures mean nothing where nothing was consumed (memory). */
const consumed = (r: BenchResult, v: number) => (r.handled > 0 ? v : undefined);

interface Figure {
  label: string;
  get: (r: BenchResult) => number | undefined;
  kind: Kind;
  /** ratios of counts (messages, lost) say nothing useful, so those rows get none */
  ratio: boolean;
}

export const FIGURES: readonly Figure[] = [
  { label: 'start s', get: (r) => r.startup?.seconds, kind: 'num', ratio: true },
  { label: 'start cpu s', get: (r) => r.startup?.cpuSeconds, kind: 'num', ratio: true },
  { label: 'idle cores', get: (r) => r.idleCores, kind: 'num', ratio: true },
  { label: 'messages', get: (r) => r.messages, kind: 'int', ratio: false },
  { label: 'enqueue s', get: (r) => r.enqueueSeconds, kind: 'num', ratio: true },
  { label: 'enqueue msg/s', get: (r) => r.enqueueRate, kind: 'int', ratio: true },
  { label: 'drain msg/s', get: (r) => r.drainRate, kind: 'int', ratio: true },
  { label: 'total s', get: (r) => r.totalSeconds, kind: 'num', ratio: true },
  { label: 'late p50 ms', get: (r) => r.lateness.p50, kind: 'num', ratio: true },
  { label: 'late p99 ms', get: (r) => r.lateness.p99, kind: 'num', ratio: true },
  { label: 'late p99.9 ms', get: (r) => r.lateness.p999, kind: 'num', ratio: true },
  { label: 'late max ms', get: (r) => r.lateness.max, kind: 'num', ratio: true },
  { label: 'late mean ms', get: (r) => r.lateness.mean, kind: 'num', ratio: true },
  // From max(due, added): what the queue adds once it holds the message, the producer's lag
  // left out (a message due before its add was late by the producer alone).
  {
    label: 'late since added p50 ms',
    get: (r) => r.latenessSinceAdded?.p50,
    kind: 'num',
    ratio: true,
  },
  {
    label: 'late since added p99 ms',
    get: (r) => r.latenessSinceAdded?.p99,
    kind: 'num',
    ratio: true,
  },
  {
    label: 'late since added max ms',
    get: (r) => r.latenessSinceAdded?.max,
    kind: 'num',
    ratio: true,
  },
  { label: 'actor p99 ms', get: (r) => r.actorLatenessP99, kind: 'num', ratio: false },
  { label: 'early starts', get: (r) => consumed(r, r.early.count), kind: 'int', ratio: false },
  { label: 'earliest ms', get: (r) => consumed(r, r.early.maxMs), kind: 'num', ratio: false },
  { label: 'commands/msg', get: (r) => r.commandsPerMessage, kind: 'num', ratio: true },
  { label: 'scripts/msg', get: (r) => r.scriptCallsPerMessage, kind: 'num', ratio: true },
  { label: 'redis cpu s', get: (r) => r.redisCpuSeconds, kind: 'num', ratio: true },
  { label: 'node cpu s', get: (r) => r.nodeCpuSeconds, kind: 'num', ratio: true },
  { label: 'bytes/msg', get: (r) => r.bytesPerMessage, kind: 'int', ratio: true },
  { label: 'handled', get: (r) => r.handled, kind: 'int', ratio: false },
  { label: 'duplicates', get: (r) => r.duplicates, kind: 'int', ratio: false },
  { label: 'lost', get: (r) => r.lost, kind: 'int', ratio: false },
];

const thousands = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * Enough digits to compare, no more: integers with separators; other values keep about three
 * significant digits (12,345 · 123.4 · 12.3 · 1.23 · 0.123). NaN / missing print as '–'.
 */
export function formatNumber(v: number | undefined, kind: Kind = 'num'): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  if (kind === 'int' || Math.abs(v) >= 1000) return thousands.format(Math.round(v));
  if (v === 0) return '0';
  if (Math.abs(v) >= 10) return v.toFixed(1);
  if (Math.abs(v) >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

/** baseline ÷ other, as "0.42×"; '–' when either side is missing or the divisor is 0. */
export function formatRatio(base: number | undefined, other: number | undefined): string {
  if (base === undefined || other === undefined) return '–';
  if (!Number.isFinite(base) || !Number.isFinite(other) || other === 0) return '–';
  const r = base / other;
  return `${r >= 10 ? r.toFixed(0) : r >= 1 ? r.toFixed(1) : r.toPrecision(2)}×`;
}

export interface TableOptions {
  title?: string;
  /** system whose ratio to every other system is shown, when it is among the results */
  baseline?: string;
}

export function formatResultsTable(results: BenchResult[], opts: TableOptions = {}): string {
  const baseline = opts.baseline ?? 'skyq';
  const base = results.find((r) => r.system === baseline);
  const others = base ? results.filter((r) => r !== base) : [];
  // The baseline leads, so its column sits next to the labels and reads first.
  const shown = base ? [base, ...others] : results;
  const header = [
    'figure',
    ...shown.map((r) => r.system),
    ...others.map((o) => `${baseline}/${o.system}`),
  ];
  const rows: string[][] = [];
  for (const f of FIGURES) {
    const values = shown.map(f.get);
    // A figure nobody has (bytes/msg outside memory, lateness in memory) is just noise.
    if (values.every((v) => v === undefined || !Number.isFinite(v))) continue;
    const ratios = others.map((o) => (f.ratio && base ? formatRatio(f.get(base), f.get(o)) : ''));
    rows.push([f.label, ...values.map((v) => formatNumber(v, f.kind)), ...ratios]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out: string[] = [];
  if (opts.title) out.push(opts.title);
  out.push(line(header), widths.map((w) => '─'.repeat(w)).join('  '));
  for (const r of rows) out.push(line(r));
  for (const r of shown) for (const n of r.notes ?? []) out.push(`note: ${r.system}: ${n}`);
  return out.join('\n');
}

/** One line per run, for logs and non-TTY output. */
export function formatResultLine(r: BenchResult): string {
  const l = r.lateness;
  const parts = [
    `${r.system} ${r.workload}: ${formatNumber(r.messages, 'int')} msgs`,
    `enqueue ${formatNumber(r.enqueueRate, 'int')}/s`,
  ];
  if (Number.isFinite(r.drainRate)) parts.push(`drain ${formatNumber(r.drainRate, 'int')}/s`);
  if (Number.isFinite(r.totalSeconds)) parts.push(`total ${formatNumber(r.totalSeconds)} s`);
  if (Number.isFinite(l.p99)) parts.push(`late p99 ${formatNumber(l.p99)} ms`);
  if (r.early.count > 0) {
    parts.push(`${r.early.count} early (earliest ${formatNumber(r.early.maxMs)} ms)`);
  }
  if (r.bytesPerMessage !== undefined)
    parts.push(`${formatNumber(r.bytesPerMessage, 'int')} B/msg`);
  parts.push(`lost ${r.lost}`, `dup ${r.duplicates}`);
  return parts.join(', ');
}

/**
 * For a workload whose due times count from the first add (seed): how long the producer took
 * against the spread it was to cover. A producer slower than its spread adds messages already
 * due, whose lateness from their due time is the producer's, not the queue's.
 */
export function producerLine(r: BenchResult, spreadMs: number): string {
  const took = `the producer took ${r.enqueueSeconds.toFixed(1)} s for a ${Number((spreadMs / 1000).toFixed(3))} s spread`;
  if (r.enqueueSeconds * 1000 <= spreadMs) return took;
  return `${took}: messages it added after their due time were late by the producer alone, which the late rows count; the late since added rows leave it out`;
}
