/**
 * `node dist/bench/compare.js` (issue 26): skyq, bee-queue and BullMQ on the same workloads in
 * the same run, interleaved (round 1: seed skyq, seed bee, seed BullMQ, steady skyq, …; round 2
 * the same), each run on a fresh private redis-server, then the median of the rounds per system
 * and figure, skyq ÷ bee-queue, and every target of ratio-targets.ts met or missed. skyq's own
 * sections (the CLI's produce into running actors, an idle launcher and raw ZADDs) run once a
 * round too. The load average is printed at the start and the end; a start above 1 judges
 * nothing unless --noisy says to anyway (and the report says so).
 */
import { loadavg } from 'node:os';
import { startRedisServer } from '../src/redis/server.js';
import { beeSystemName, runBee } from './bee.js';
import { bullmqSystemName, runBullmq } from './bullmq.js';
import {
  boundText,
  median,
  RATIO_TARGETS,
  type RatioTarget,
  TARGET_WORKLOADS,
  within,
} from './ratio-targets.js';
import { formatNumber } from './report.js';
import { runSkyq } from './skyq.js';
import type { Sizes } from './target-kit.js';
import { SECTIONS } from './target-sections.js';
import type { TargetRow } from './target-table.js';
import { verdict } from './target-table.js';
import { type BenchResult, defaultWorkload, type WorkloadOptions } from './workloads.js';

const SKYQ = 'skyq';
const BEE = beeSystemName({ workers: 1, concurrency: 100 });
const BULLMQ = bullmqSystemName({ workers: 1, concurrency: 100 });

type Runner = (url: string, w: WorkloadOptions) => Promise<BenchResult>;
const RUNNERS: [string, Runner][] = [
  // startActors' defaults; the burst starts its actors once every message is in (start-up counts).
  [SKYQ, (url, w) => runSkyq(url, w, { coldStart: w.name === 'burst' })],
  [BEE, (url, w) => runBee(url, w, { workers: 1, concurrency: 100 })],
  [BULLMQ, (url, w) => runBullmq(url, w, { workers: 1, concurrency: 100 })],
];

/** Above this load average at the start, nothing is judged without --noisy. */
const QUIET_LOAD = 1;

export interface TargetRunOptions {
  rounds: number;
  quick: boolean;
  noisy: boolean;
  log: (line: string) => void;
}

function workloadOf(name: (typeof TARGET_WORKLOADS)[number], quick: boolean): WorkloadOptions {
  const w = defaultWorkload(name);
  if (quick) {
    w.count = Math.floor(w.count / 10);
    if (w.durationMs !== undefined) w.durationMs = 5_000;
  }
  return w;
}

async function onFreshServer(run: (url: string) => Promise<BenchResult>): Promise<BenchResult> {
  const server = await startRedisServer();
  try {
    return await run(server.url);
  } finally {
    await server.stop();
  }
}

const SKYQ_SIZES = (quick: boolean): Sizes => ({
  idleSeconds: quick ? 2 : 10,
  idleSettleSeconds: quick ? 0 : 30,
  steadyRate: 2_000,
  steadySeconds: quick ? 3 : 30,
  seedCount: quick ? 10_000 : 100_000,
  seedSpreadMs: 5_000,
  burstCount: 100_000,
  addbulkCount: 200_000,
  poolCount: 20_000,
  memoryCount: 100_000,
  growthPending: 1_000_000,
  growthBase: 10_000,
  growthDrain: 100_000,
  graceSeconds: 60,
});

/** The skyq-only rows that carry an issue 26 target: the CLI, the idle launcher, raw ZADDs. */
const OWN_ROWS = [
  /produce --count .* lateness p99/,
  /launcher cores, settled/,
  /raw ZADD, overdue when added: p99/,
];

export async function runTargets(options: TargetRunOptions) {
  const loadAtStart = loadavg()[0] as number;
  const results = new Map<string, BenchResult[]>(); // "<workload> <system>" → rounds
  const ownRows: TargetRow[][] = [];
  for (let round = 1; round <= options.rounds; round++) {
    for (const name of TARGET_WORKLOADS) {
      for (const [system, run] of RUNNERS) {
        options.log(`round ${round}/${options.rounds}: ${name} ${system} …`);
        const r = await onFreshServer((url) => run(url, workloadOf(name, options.quick)));
        const key = `${name} ${system}`;
        results.set(key, [...(results.get(key) ?? []), r]);
      }
    }
    const sizes = SKYQ_SIZES(options.quick);
    const rows: TargetRow[] = [];
    for (const section of [SECTIONS.cli, SECTIONS.idle, SECTIONS.foreign]) {
      options.log(`round ${round}/${options.rounds}: skyq's own section …`);
      rows.push(
        ...(await section(sizes)).rows.filter((r) => OWN_ROWS.some((p) => p.test(r.figure))),
      );
    }
    ownRows.push(rows);
  }
  const loadAtEnd = loadavg()[0] as number;
  return { loadAtStart, loadAtEnd, results, ownRows };
}

type Outcome = Awaited<ReturnType<typeof runTargets>>;

const fmt = (n: number, unit: string) =>
  Number.isFinite(n)
    ? `${formatNumber(n, Math.abs(n) >= 100 ? 'int' : 'num')}${unit ? ` ${unit}` : ''}`
    : '–';

/** The report: one line per target, the medians of each system, the ratio, met or missed. */
export function formatTargets(
  outcome: Outcome,
  options: Pick<TargetRunOptions, 'noisy' | 'rounds'>,
) {
  const judged = outcome.loadAtStart <= QUIET_LOAD || options.noisy;
  const medianOf = (t: RatioTarget, system: string) =>
    median((outcome.results.get(`${t.workload} ${system}`) ?? []).map(t.read));
  const header = ['workload', 'figure', 'skyq', 'bee-queue', 'BullMQ', 'skyq/bee', 'target', ''];
  const rows: string[][] = [];
  let met = 0;
  let total = 0;
  for (const t of RATIO_TARGETS) {
    const [skyq, bee, bull] = [SKYQ, BEE, BULLMQ].map((s) => medianOf(t, s)) as number[];
    const ratio = skyq / bee;
    const ok = t.ratio ? within(ratio, t.ratio) : within(skyq, t.own as NonNullable<typeof t.own>);
    total++;
    if (ok) met++;
    rows.push([
      t.workload,
      t.figure,
      fmt(skyq, t.unit),
      fmt(bee, t.unit),
      fmt(bull, t.unit),
      Number.isFinite(ratio) ? ratio.toFixed(2) : '–',
      t.ratio ? `${boundText(t.ratio)} ×` : boundText(t.own as NonNullable<typeof t.own>, t.unit),
      judged ? (ok ? 'met' : 'missed') : 'not judged',
    ]);
  }
  const own = new Map<string, TargetRow[]>();
  for (const round of outcome.ownRows)
    for (const r of round) own.set(r.figure, [...(own.get(r.figure) ?? []), r]);
  for (const [figure, list] of own) {
    const first = list[0] as TargetRow;
    const value = median(list.map((r) => r.measured));
    const ok = verdict({ ...first, measured: value }) === 'met';
    total++;
    if (ok) met++;
    rows.push([
      'skyq only',
      figure,
      fmt(value, first.unit),
      '',
      '',
      '',
      first.target ? boundText(first.target, first.unit) : '',
      judged ? (ok ? 'met' : 'missed') : 'not judged',
    ]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const load = `load average ${outcome.loadAtStart.toFixed(2)} at the start, ${outcome.loadAtEnd.toFixed(2)} at the end`;
  const verdictLine = judged
    ? `${met} of ${total} targets met (medians of ${options.rounds} interleaved rounds; ${load})`
    : `not judged: the load average was ${outcome.loadAtStart.toFixed(2)} at the start, above ${QUIET_LOAD} (run on a quiet machine, or pass --noisy to judge anyway); ${load}`;
  const noisyNote =
    options.noisy && outcome.loadAtStart > QUIET_LOAD
      ? ['judged with --noisy on a busy machine: the figures are the machine’s as much as skyq’s']
      : [];
  return [
    line(header),
    widths.map((w) => '─'.repeat(w)).join('  '),
    ...rows.map(line),
    '',
    verdictLine,
    ...noisyNote,
  ].join('\n');
}
