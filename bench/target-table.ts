/**
 * One row per figure of issue 9's targets: what was measured, the target, met or missed. A row
 * without a target is context (how early the earliest start was, Redis calls while idle, …).
 */
import { formatNumber } from './report.js';

export type Target = { atMost: number } | { atLeast: number };

export interface TargetRow {
  section: string;
  figure: string;
  measured: number;
  unit: string;
  target?: Target;
}

export type Verdict = 'met' | 'missed' | '';

export function verdict(row: TargetRow): Verdict {
  if (!row.target) return '';
  if (!Number.isFinite(row.measured)) return 'missed';
  return 'atMost' in row.target
    ? row.measured <= row.target.atMost
      ? 'met'
      : 'missed'
    : row.measured >= row.target.atLeast
      ? 'met'
      : 'missed';
}

/** Targets are round numbers: print them as written (1, 0.15, 150,000). */
const asWritten = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

export function targetText(row: TargetRow): string {
  if (!row.target) return '';
  const unit = row.unit ? ` ${row.unit}` : '';
  return 'atMost' in row.target
    ? `≤ ${asWritten.format(row.target.atMost)}${unit}`
    : `≥ ${asWritten.format(row.target.atLeast)}${unit}`;
}

export function measuredText(row: TargetRow): string {
  const integral = Number.isInteger(row.measured) || Math.abs(row.measured) >= 1000;
  return `${formatNumber(row.measured, integral ? 'int' : 'num')}${row.unit ? ` ${row.unit}` : ''}`;
}

export function formatTargetTable(rows: TargetRow[]): string {
  const header = ['section', 'figure', 'measured', 'target', ''];
  const cells = rows.map((r) => [r.section, r.figure, measuredText(r), targetText(r), verdict(r)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((cell, i) => (i === 2 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const met = rows.filter((r) => verdict(r) === 'met').length;
  const judged = rows.filter((r) => r.target).length;
  return [
    line(header),
    widths.map((w) => '─'.repeat(w)).join('  '),
    ...cells.map(line),
    '',
    `${met} of ${judged} targets met`,
  ].join('\n');
}
