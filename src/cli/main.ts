#!/usr/bin/env node
// The skyq command line: start, produce, stats, logs, get, reschedule, pause, resume, dlq,
// list, cancel, bench, dashboard, acl.
import { Command } from 'commander';
import { SkyqError } from '../base/errors.js';
import { connectionChecksSettled } from '../redis/connection.js';
import { registerAcl } from './acl.js';
import { registerBench } from './bench.js';
import { noRedisNamed } from './common.js';
import { registerDashboard } from './dashboard.js';
import { registerCancel, registerDlq } from './dlq.js';
import { embeddedDir } from './embedded-dir.js';
import { cliErrorLine } from './error-line.js';
import { registerEvents } from './events.js';
import { registerGet } from './get.js';
import { commandPathOf, hintHelpAfterErrors } from './help-hint.js';
import { registerList } from './list.js';
import { registerLogs } from './logs.js';
import { registerPause } from './pause.js';
import { registerProduce } from './produce.js';
import { registerReschedule } from './reschedule.js';
import { registerSchedules } from './schedules.js';
import { registerStart } from './start.js';
import { registerStats } from './stats.js';
import { packageVersion } from './version.js';

const program = new Command('skyq')
  .description('delayed, FIFO and priority message queues on Redis, run by worker_threads actors')
  .version(packageVersion(), '-V, --version', 'print the version of skyq');

// A reader that goes away (`skyq logs | head`, `skyq stats --watch | head`) ends the command quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

registerStart(program);
registerProduce(program);
registerStats(program);
registerLogs(program);
registerGet(program);
registerEvents(program);
registerReschedule(program);
registerPause(program);
registerDlq(program);
registerList(program);
registerSchedules(program);
registerCancel(program);
registerBench(program);
registerDashboard(program);
registerAcl(program);

// A flag commander refuses is one line, then where to read more: the whole help buried the error.
hintHelpAfterErrors(program);

// The running command's prefix, so a NOPERM error can name the ACL rule for it, and its
// name, so a refused flag value can point at its help.
let prefix: string | undefined;
let commandPath = '';
/** No --redis, --cluster or REDIS_URL: the password came from ./.skyq of this directory. */
let noneNamed = false;
program.hook('preAction', (_program, action) => {
  prefix = action.opts().prefix as string | undefined;
  commandPath = commandPathOf(action);
  noneNamed = noRedisNamed(action.opts());
});

try {
  await program.parseAsync();
} catch (error) {
  // Our errors and Redis's (unreachable, NOPERM, a key of the wrong type, …) are for the
  // operator: one line. Anything else is a defect, and its stack says where.
  await connectionChecksSettled();
  const line = cliErrorLine(error, prefix);
  // Run from another folder, ./.skyq holds no password: say which folder was looked in.
  const where =
    noneNamed && /refused the login/.test(line)
      ? ` (no Redis named, so the embedded server's password was looked for in ${embeddedDir()}/: run from the folder where skyq start runs, or give --redis)`
      : '';
  console.error(`skyq: ${line}${where}`);
  if (error instanceof SkyqError && error.code === 'ERR_SKYQ_INVALID_OPTION')
    console.error(`see skyq ${commandPath} --help`);
  process.exit(1);
}
