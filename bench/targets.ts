/**
 * `npm run bench:targets`: every target of issue 18 (and issue 9 before it) measured in one run, each section on fresh
 * private redis-servers, with startActors' defaults and a no-op handler. Prints one table
 * (figure, measured, target, met / missed) and the command line, or everything as JSON.
 *   node dist/bench/targets.js [--only seed,burst] [--quick] [--seed-count 20000] [--json]
 * Run it on a quiet machine: on a busy one every figure is the machine's, not skyq's.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Sizes } from './target-kit.js';
import { SECTIONS, type SectionName } from './target-sections.js';
import { formatTargetTable, type TargetRow, verdict } from './target-table.js';

interface SizeFlag {
  key: Exclude<keyof Sizes, 'actorNice' | 'noHistory' | 'names'>;
  flag: string;
  what: string;
  /** issue 9's size */
  full: number;
  /** --quick: every section in seconds, to check the harness runs */
  quick: number;
}

const SIZE_FLAGS: SizeFlag[] = [
  { key: 'idleSeconds', flag: 'idle-seconds', what: 'idle: seconds measured', full: 10, quick: 2 },
  {
    key: 'idleSettleSeconds',
    flag: 'idle-settle-seconds',
    what: 'idle: seconds before the settled window',
    full: 30,
    quick: 0,
  },
  { key: 'steadyRate', flag: 'steady-rate', what: 'steady: messages/s', full: 2_000, quick: 2_000 },
  { key: 'steadySeconds', flag: 'steady-seconds', what: 'steady: seconds', full: 30, quick: 3 },
  { key: 'seedCount', flag: 'seed-count', what: 'seed: messages', full: 100_000, quick: 10_000 },
  {
    key: 'seedSpreadMs',
    flag: 'seed-spread-ms',
    what: 'seed: due over',
    full: 5_000,
    quick: 2_000,
  },
  { key: 'burstCount', flag: 'burst-count', what: 'burst: messages', full: 100_000, quick: 10_000 },
  {
    key: 'addbulkCount',
    flag: 'addbulk-count',
    what: 'addBulk: messages',
    full: 200_000,
    quick: 20_000,
  },
  { key: 'poolCount', flag: 'pool-count', what: 'pool: messages', full: 20_000, quick: 2_000 },
  {
    key: 'memoryCount',
    flag: 'memory-count',
    what: 'memory: messages',
    full: 100_000,
    quick: 10_000,
  },
  {
    key: 'growthPending',
    flag: 'growth-pending',
    what: 'growth: large backlog',
    full: 1_000_000,
    quick: 50_000,
  },
  {
    key: 'growthBase',
    flag: 'growth-base',
    what: 'growth: small backlog',
    full: 10_000,
    quick: 1_000,
  },
  {
    key: 'growthDrain',
    flag: 'growth-drain',
    what: 'growth: messages drained',
    full: 100_000,
    quick: 10_000,
  },
  {
    key: 'graceSeconds',
    flag: 'grace-seconds',
    what: 'past the last due, the rest is lost',
    full: 60,
    quick: 20,
  },
];

const SECTION_NAMES = Object.keys(SECTIONS) as SectionName[];

const USAGE = `usage: node dist/bench/targets.js [options]
  --only a,b         sections to run (default all): ${SECTION_NAMES.join(',')}
  --quick            small sizes, to check that everything runs (verdicts then mean little)
  --json             rows and raw results as JSON on stdout
  --actor-nice n     startActors' actorNice in every section (default: startActors' own)
  --no-history       keepDone: false in the skyq runs, to price the finished-job history default
  --names n          name the jobs job.0 … job.<n−1> (a command table handler), to price named jobs
${SIZE_FLAGS.map((s) => `  --${s.flag.padEnd(16)} ${s.what} (${s.full}; --quick ${s.quick})`).join('\n')}`;

interface TargetOptions {
  sections: SectionName[];
  sizes: Sizes;
  json: boolean;
}

function parseTargetArgs(argv: string[]): TargetOptions {
  const { values } = parseArgs({
    // Size flags are built from SIZE_FLAGS, so the parsed values are read by name below.
    args: argv,
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'actor-nice': { type: 'string' },
      'no-history': { type: 'boolean', default: false },
      names: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      ...Object.fromEntries(SIZE_FLAGS.map((s) => [s.flag, { type: 'string' as const }])),
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const sections = values.only ? values.only.split(',').map((s) => s.trim()) : SECTION_NAMES;
  const unknown = sections.filter((s) => !(SECTION_NAMES as string[]).includes(s));
  if (unknown.length > 0) throw new Error(`unknown section: ${unknown.join(', ')}\n${USAGE}`);
  const sizes = {} as Sizes;
  for (const s of SIZE_FLAGS) {
    const given = (values as Record<string, unknown>)[s.flag] as string | undefined;
    const n =
      given === undefined ? (values.quick ? s.quick : s.full) : Number(given.replace(/_/g, ''));
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`--${s.flag} must be a whole number > 0, not ${given}`);
    sizes[s.key] = n;
  }
  const nice = values['actor-nice'];
  if (nice !== undefined) {
    sizes.actorNice = Number(nice);
    if (!Number.isInteger(sizes.actorNice) || sizes.actorNice < 0 || sizes.actorNice > 19)
      throw new Error(`--actor-nice must be a whole number from 0 to 19, not ${nice}`);
  }
  if (values['no-history']) sizes.noHistory = true;
  if (values.names !== undefined) {
    sizes.names = Number(values.names);
    if (!Number.isInteger(sizes.names) || sizes.names < 1 || sizes.names > 10_000)
      throw new Error(`--names must be a whole number from 1 to 10000, not ${values.names}`);
  }
  return { sections: sections as SectionName[], sizes, json: values.json };
}

function context(sizes: Sizes) {
  const differ = SIZE_FLAGS.filter((s) => sizes[s.key] !== s.full).map((s) => s.flag);
  const redis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout ?? '';
  return {
    node: process.version,
    redis: /v=(\S+)/.exec(redis)?.[1] ?? 'unknown',
    cpus: availableParallelism(),
    loadAverageAtStart: loadavg()[0] as number,
    /** sizes that are not issue 9's: their verdicts are indicative only */
    sizesChanged: differ,
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseTargetArgs(argv);
  const command = ['node', 'dist/bench/targets.js', ...argv].join(' ');
  const ctx = context(options.sizes);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const rows: TargetRow[] = [];
  const results: Record<string, unknown> = {};
  for (const name of options.sections) {
    log(`${name} …`);
    const started = performance.now();
    try {
      const outcome = await SECTIONS[name](options.sizes);
      rows.push(...outcome.rows);
      results[name] = outcome.results;
      for (const [run, result] of Object.entries(outcome.results)) {
        const window = (result as { windowUs?: [number, number] } | undefined)?.windowUs;
        if (window) log(`  ${name} ${run}: profile window ${window.join(':')}`);
      }
    } catch (error) {
      process.exitCode = 1;
      log(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
      rows.push({
        section: name,
        figure: 'FAILED (see stderr)',
        measured: NaN,
        unit: '',
        target: { atMost: 0 },
      });
    }
    log(`${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const loadAverageAtEnd = loadavg()[0] as number;
  if (options.json) {
    const withVerdicts = rows.map((r) => ({ ...r, verdict: verdict(r) }));
    console.log(
      JSON.stringify({ command, ...ctx, loadAverageAtEnd, rows: withVerdicts, results }, null, 2),
    );
    return;
  }
  console.log(
    `skyq against its targets · node ${ctx.node} · redis ${ctx.redis} · ${ctx.cpus} CPUs · ` +
      `load average ${ctx.loadAverageAtStart.toFixed(2)} at start, ${loadAverageAtEnd.toFixed(2)} at end`,
  );
  if (ctx.sizesChanged.length > 0) {
    console.log(`sizes changed (${ctx.sizesChanged.join(', ')}): verdicts are indicative only`);
  }
  console.log(`\n${formatTargetTable(rows)}\n\ncommand: ${command}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main()
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    })
    .finally(() => {
      // Everything is closed by now; if a library still holds a handle, do not hang the shell.
      setTimeout(() => process.exit(), 5_000).unref();
    });
}
