// skyq bench: a load test against your Redis (default: a private one it
// starts), driving the real actor runtime. Prints a progress bar while it
// runs, then a table (or --json) of the figures.

import type { Command } from 'commander';
import { DEFAULT_SKYQ_SHAPE, type SkyqShape } from '../../bench/skyq-shape.js';
import {
  assertLoopback,
  defaultWorkload,
  WORKLOAD_NAMES,
  type WorkloadName,
} from '../../bench/workloads.js';
import { errors } from '../base/errors.js';
import { redactUrl } from '../base/redact.js';
import { checkRedisUrl } from '../redis/connection.js';
import { parseCount, parseDuration, parsePositiveCount } from './duration.js';

interface BenchFlags {
  workload: string;
  redis?: string;
  count?: string;
  actors: string;
  concurrency: string;
  batch: string;
  bodyBytes: string;
  backlog: string;
  spread?: string;
  rate?: string;
  duration?: string;
  idle: string;
  json?: boolean;
}

export function registerBench(program: Command): void {
  program
    .command('bench')
    .description('load test: seed (100,000 due over 5 s), burst, steady or memory')
    .option('--workload <name>', WORKLOAD_NAMES.join(' | '), 'seed')
    .option('--redis <url>', 'a loopback Redis to load (default: a private redis-server)')
    .option('--count <n>', 'messages (seed, burst, memory)')
    .option('--actors <n>', 'actors (groups)', '10')
    .option(
      '--concurrency <n>',
      'handlers at once per actor',
      String(DEFAULT_SKYQ_SHAPE.concurrency),
    )
    .option('--batch <n>', 'most messages per poll', String(DEFAULT_SKYQ_SHAPE.batch))
    .option('--body-bytes <n>', 'body size', '100')
    .option('--backlog <n>', 'far-future messages added first, to show cost against size', '0')
    .option('--spread <duration>', 'due times spread over 0..spread (seed 5s, steady 1s)')
    .option('--rate <n>', 'steady: messages per second', '2000')
    .option('--duration <duration>', 'steady: how long to produce', '30s')
    .option(
      '--idle <duration>',
      'measure the idle actors this long, from 1 s after ready (seed, steady; 0 skips)',
      '2s',
    )
    .option('--json', 'print the result as JSON')
    .action(async (flags: BenchFlags) => {
      if (!WORKLOAD_NAMES.includes(flags.workload as WorkloadName)) {
        throw errors.invalidOption(
          'workload',
          `expected ${WORKLOAD_NAMES.join(', ')}`,
          flags.workload,
        );
      }
      const workload = defaultWorkload(flags.workload as WorkloadName);
      if (flags.count !== undefined) workload.count = parseCount(flags.count, 'count');
      workload.bodyBytes = parseCount(flags.bodyBytes, 'body-bytes');
      workload.backlog = parseCount(flags.backlog, 'backlog');
      if (flags.spread !== undefined) workload.spreadMs = parseDuration(flags.spread, 'spread');
      if (workload.name === 'steady') {
        workload.rate = parseCount(flags.rate ?? '2000', 'rate');
        workload.durationMs = parseDuration(flags.duration ?? '30s', 'duration');
      }
      const shape: SkyqShape = {
        actors: parseCount(flags.actors, 'actors'),
        concurrency: parsePositiveCount(flags.concurrency, 'concurrency'),
        batch: parsePositiveCount(flags.batch, 'batch'),
      };
      const idleMs = parseDuration(flags.idle, 'idle');
      // These runs flood the server they load: refuse any other before starting anything.
      if (flags.redis !== undefined) assertLoopback(checkRedisUrl(flags.redis));
      // Loaded when the command runs, not when it registers (main.ts).
      // cli-progress is CommonJS: its exports are its default, in Node and in the CLI's bundle
      // alike (esbuild names no other export of a CommonJS module imported on demand).
      const [{ default: progress }, { formatResultsTable, producerLine }, { runSkyq }, servers] =
        await Promise.all([
          import('cli-progress'),
          import('../../bench/report.js'),
          import('../../bench/skyq.js'),
          import('../redis/server.js'),
        ]);
      const server = flags.redis ? null : await servers.startRedisServer();
      const url = flags.redis ?? (server?.url as string);
      const out = flags.json ? process.stderr : process.stdout;
      const bar = new progress.SingleBar(
        {
          stream: out,
          format: `${workload.name} {bar} {value}/{total} {percentage}% {duration_formatted}`,
          noTTYOutput: true,
          notTTYSchedule: 2000,
        },
        progress.Presets.shades_classic,
      );
      let started = false;
      try {
        const result = await runSkyq(url, workload, { shape, idleMs }, (done, expected) => {
          if (!started) bar.start(expected, 0);
          started = true;
          bar.update(done);
        });
        if (started) bar.stop();
        if (flags.json) console.log(JSON.stringify(result, null, 2));
        else {
          const title = `── skyq bench: ${workload.name} on ${redactUrl(url)} ──`;
          console.log(`\n${formatResultsTable([result], { title })}`);
          if (workload.anchor === 'first-add') console.log(producerLine(result, workload.spreadMs));
        }
      } finally {
        if (started) bar.stop();
        await server?.stop();
      }
    });
}
