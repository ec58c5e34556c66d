#!/usr/bin/env node
// The skyq command line: start, produce, stats, logs, dlq, cancel, bench.
import { Command } from 'commander';
import { SkyqError } from '../errors.js';
import { registerBench } from './bench.js';
import { registerDashboard } from './dashboard.js';
import { registerCancel, registerDlq } from './dlq.js';
import { registerLogs } from './logs.js';
import { registerProduce } from './produce.js';
import { registerStart } from './start.js';
import { registerStats } from './stats.js';

const program = new Command('skyq')
  .description('delayed, FIFO and priority message queues on Redis, run by worker_threads actors')
  .showHelpAfterError();

registerStart(program);
registerProduce(program);
registerStats(program);
registerLogs(program);
registerDlq(program);
registerCancel(program);
registerBench(program);
registerDashboard(program);

try {
  await program.parseAsync();
} catch (error) {
  const message =
    error instanceof SkyqError ? error.message : ((error as Error).stack ?? String(error));
  console.error(`skyq: ${message}`);
  process.exit(1);
}
