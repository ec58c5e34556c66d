/**
 * `npm run bench` / `node dist/bench/compare.js`: with no --workload or --system, issue 26's
 * targets (compare-targets.ts): skyq, bee-queue and BullMQ interleaved over --rounds rounds,
 * medians, ratios to bee-queue, met or missed, and the load average. With them: every chosen
 * workload through every chosen system once, each run on a fresh private redis-server (so no
 * run inherits another's memory, stats or leftovers), then one table per workload. Never
 * points at a shared Redis: servers come from startRedisServer on loopback.
 *
 * Plugging in another system (skyq): add it to `systems` — its BenchResult.system must equal the
 * key; the tables then show `skyq/<other>` ratios for every figure.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Presets, SingleBar } from 'cli-progress';
import { startRedisServer } from '../src/redis/server.js';
import { beeSystemName, runBee } from './bee.js';
import { bullmqSystemName, runBullmq } from './bullmq.js';
import { formatTargets, runTargets } from './compare-targets.js';
import { runNaive } from './naive.js';
import { formatResultLine, formatResultsTable } from './report.js';
import { DEFAULT_SKYQ_SHAPE, runSkyq } from './skyq.js';
import {
  type BenchResult,
  defaultWorkload,
  type Progress,
  type SystemRunner,
  WORKLOAD_NAMES,
  type WorkloadName,
  type WorkloadOptions,
} from './workloads.js';

const bullmq = (workers: number, concurrency: number): [string, SystemRunner] => [
  bullmqSystemName({ workers, concurrency }),
  (url, w, progress) => runBullmq(url, w, { workers, concurrency }, progress),
];

const bee = (workers: number, concurrency: number): [string, SystemRunner] => [
  beeSystemName({ workers, concurrency }),
  (url, w, progress) => runBee(url, w, { workers, concurrency }, progress),
];

/** Every system compared, by the name its results carry. Insertion order = column order. */
export const systems: Record<string, SystemRunner> = Object.fromEntries([
  [
    'skyq',
    (url: string, w: WorkloadOptions, p?: Progress) =>
      runSkyq(url, w, { shape: DEFAULT_SKYQ_SHAPE }, p),
  ],
  ['naive', runNaive],
  bee(1, 100),
  bullmq(1, 100),
  bullmq(10, 10),
]);

export interface CompareOptions {
  workloads: WorkloadName[];
  systems: string[];
  count?: number;
  backlog?: number;
  graceMs?: number;
  quick: boolean;
  json: boolean;
  /** no --workload and no --system: issue 26's targets */
  targets: boolean;
  rounds: number;
  noisy: boolean;
}

const USAGE = `usage: node dist/bench/compare.js [options]
  (no --workload, no --system: every target of issue 26, skyq against bee-queue and BullMQ)
  --rounds N       interleaved rounds for the targets; medians are judged (default 3)
  --noisy          judge the targets even when the load average at the start is above 1
  --workload a,b   ${WORKLOAD_NAMES.join(',')} (default: all)
  --system a,b     systems to run (default: all: ${Object.keys(systems).join(',')})
  --count N        messages for seed, burst and memory
  --backlog N      far-future messages added before each run (default 0)
  --grace S        seconds past the last due time before the rest counts as lost (120)
  --quick          10× fewer messages, steady for 5 s
  --json           all results as JSON on stdout (progress goes to stderr)`;

export function parseCompareArgs(argv: string[]): CompareOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      workload: { type: 'string' },
      system: { type: 'string' },
      count: { type: 'string' },
      backlog: { type: 'string' },
      grace: { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      noisy: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const list = (s: string | undefined, all: readonly string[], what: string) => {
    const names = s ? s.split(',').map((x) => x.trim()) : [...all];
    const bad = names.filter((n) => !all.includes(n));
    if (bad.length > 0) throw new Error(`unknown ${what}: ${bad.join(', ')}\n${USAGE}`);
    return names;
  };
  const int = (s: string | undefined, what: string) => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${what} must be a whole number`);
    return n;
  };
  return {
    workloads: list(values.workload, WORKLOAD_NAMES, 'workload') as WorkloadName[],
    systems: list(values.system, Object.keys(systems), 'system'),
    count: int(values.count, 'count'),
    backlog: int(values.backlog, 'backlog'),
    graceMs: values.grace === undefined ? undefined : (int(values.grace, 'grace') ?? 0) * 1000,
    quick: values.quick,
    json: values.json,
    targets: values.workload === undefined && values.system === undefined,
    rounds: int(values.rounds, 'rounds') ?? 3,
    noisy: values.noisy,
  };
}

export function workloadFor(name: WorkloadName, opts: CompareOptions): WorkloadOptions {
  const w = defaultWorkload(name);
  if (opts.quick) {
    w.count = Math.floor(w.count / 10);
    if (w.durationMs !== undefined) w.durationMs = 5_000;
  }
  if (opts.count !== undefined) w.count = opts.count;
  if (opts.backlog !== undefined) w.backlog = opts.backlog;
  if (opts.graceMs !== undefined) w.graceMs = opts.graceMs;
  return w;
}

interface ProgressView {
  update: Progress;
  stop(): void;
}

// A bar on a terminal; elsewhere (CI logs, pipes) a line every few seconds instead of a
// stream of carriage returns.
function progressView(label: string, stream: NodeJS.WriteStream): ProgressView {
  if (stream.isTTY) {
    const bar = new SingleBar(
      {
        stream,
        format: `${label.padEnd(22)} {bar} {value}/{total} {percentage}% {duration_formatted}`,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    let started = false;
    return {
      update: (done, expected) => {
        if (!started) bar.start(expected, done);
        started = true;
        bar.update(done);
      },
      stop: () => started && bar.stop(),
    };
  }
  const t0 = Date.now();
  let last = 0;
  let lastDone = -1;
  return {
    update: (done, expected) => {
      if (done === lastDone || (Date.now() - last < 2_000 && done < expected)) return;
      last = Date.now();
      lastDone = done;
      stream.write(`${label}: ${done}/${expected} (${((last - t0) / 1000).toFixed(1)} s)\n`);
    },
    stop: () => {},
  };
}

async function runOne(
  system: string,
  workload: WorkloadOptions,
  stream: NodeJS.WriteStream,
): Promise<BenchResult> {
  const runner = systems[system];
  if (!runner) throw new Error(`no such system: ${system}`);
  const server = await startRedisServer();
  const view = progressView(`${workload.name} ${system}`, stream);
  try {
    return await runner(server.url, workload, view.update);
  } finally {
    view.stop();
    await server.stop();
  }
}

export async function compare(opts: CompareOptions): Promise<BenchResult[]> {
  const stream = opts.json ? process.stderr : process.stdout;
  const all: BenchResult[] = [];
  let failed = 0;
  for (const name of opts.workloads) {
    const workload = workloadFor(name, opts);
    const results: BenchResult[] = [];
    for (const system of opts.systems) {
      try {
        const r = await runOne(system, workload, stream);
        results.push(r);
        if (!opts.json) stream.write(`${formatResultLine(r)}\n`);
      } catch (err) {
        failed++;
        process.stderr.write(`${name} ${system} failed: ${(err as Error).stack ?? err}\n`);
      }
    }
    all.push(...results);
    if (!opts.json && results.length > 0) {
      stream.write(`\n${formatResultsTable(results, { title: `── ${name} ──` })}\n\n`);
    }
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  if (failed > 0) process.exitCode = 1;
  return all;
}

async function main(): Promise<void> {
  const opts = parseCompareArgs(process.argv.slice(2));
  if (opts.targets) {
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const outcome = await runTargets({ ...opts, log });
    console.log(
      `\nskyq against bee-queue and BullMQ, issue 26's targets · ${process.argv.slice(2).join(' ') || 'no options'}\n`,
    );
    console.log(formatTargets(outcome, opts));
  } else await compare(opts);
  // Everything is closed by now; if some library still holds a handle, do not hang the shell.
  setTimeout(() => {
    process.stderr.write('compare: a handle is still open after the run; exiting\n');
    process.exit();
  }, 5_000).unref();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
    process.exit(1);
  });
}
