#!/usr/bin/env node
// The skyq command line: start, produce, stats, logs, get, reschedule, pause, resume, dlq,
// list, cancel, bench, dashboard, acl.
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { SkyqError } from '../base/errors.js';
import { connectionChecksSettled } from '../redis/connection.js';
import { notePath, readEmbeddedNote } from '../redis/default-redis.js';
import { registerAcl } from './acl.js';
import { registerBench } from './bench.js';
import { noRedisNamed } from './common.js';
import { registerDashboard } from './dashboard.js';
import { registerCancel, registerDlq } from './dlq.js';
import { embeddedDir, embeddedPort } from './embedded-dir.js';
import { registerEnv } from './env.js';
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

// Every command registers at each run, for its help and flags. What a command runs on (the
// queue, the runtime, the HTTP server, the bench) loads in its action, so that `--version` or
// `skyq get` does not load the others: they cost every run half a second (test/cli-load).
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
registerEnv(program);

// A flag commander refuses is one line, then where to read more: the whole help buried the error.
hintHelpAfterErrors(program);

// The running command's prefix, so a NOPERM error can name the ACL rule for it, and its
// name, so a refused flag value can point at its help.
let prefix: string | undefined;
let commandPath = '';
/** No --redis, --cluster or REDIS_URL: the embedded server's note or ./.skyq gave the password. */
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
  console.error(`skyq: ${line}${noneNamed ? whereLookedFor(line) : ''}`);
  if (error instanceof SkyqError && error.code === 'ERR_SKYQ_INVALID_OPTION')
    console.error(`see skyq ${commandPath} --help`);
  process.exit(1);
}

/**
 * With no Redis named, a refused login or no answer at all means no embedded server of this user
 * runs on the port (it would have left its note): say so, and where the password was looked for.
 */
function whereLookedFor(line: string): string {
  if (readEmbeddedNote() !== undefined) return '';
  // A note left by a server that no longer runs (killed, or the machine restarted) is there.
  const note = existsSync(notePath())
    ? `${notePath()} names a server that no longer runs`
    : `${notePath()} is missing`;
  const none = `no Redis named, and no skyq start of this user runs an embedded server on port ${embeddedPort()} (${note})`;
  if (/refused the login/.test(line))
    return ` (${none}, so the password was looked for in ${embeddedDir()}/: give --redis or REDIS_URL)`;
  if (/^cannot reach Redis/.test(line))
    return ` (${none}: start one with npx skyq start, or give --redis or REDIS_URL)`;
  return '';
}
