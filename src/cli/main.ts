#!/usr/bin/env node
// The skyq command line: start, produce, stats, logs, dlq, cancel, bench, acl.
import { Command } from 'commander';
import { connectionChecksSettled } from '../redis/connection.js';
import { registerAcl } from './acl.js';
import { registerBench } from './bench.js';
import { registerCancel, registerDlq } from './dlq.js';
import { cliErrorLine } from './error-line.js';
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
registerAcl(program);

// The running command's prefix, so a NOPERM error can name the ACL rule for it.
let prefix: string | undefined;
program.hook('preAction', (_program, action) => {
  prefix = action.opts().prefix as string | undefined;
});

try {
  await program.parseAsync();
} catch (error) {
  await connectionChecksSettled();
  console.error(`skyq: ${cliErrorLine(error, prefix)}`);
  process.exit(1);
}
