// skyq logs: the actors' and the launcher's JSON-lines logs (rotated files
// included), merged in time order, made readable and filtered by actor, job id
// and level; --follow keeps printing new lines, still in time order.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { actorLogFile, DEFAULT_LOG_DIR } from '../runtime/log-names.js';
import { parseCount } from './duration.js';
import { LogFollower } from './log-follow.js';
import { formatLogLine, LOG_LEVEL_NUMBERS, type LogFilter } from './log-format.js';
import { findSources, liveSizes, mergedHistory, type TimedLine } from './log-sources.js';

interface LogsFlags {
  actor?: string;
  job?: string;
  level: string;
  follow?: boolean;
  logDir: string;
}

export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description('print the actors’ logs readably, in time order (rotated files included)')
    .option('--actor <g>', 'only this actor (group)')
    .option('--job <id>', 'only lines about this message id')
    .option('--level <level>', 'lowest level shown: trace, debug, info, warn, error', 'info')
    .option('--follow', 'keep printing new lines (all actors interleaved by time)')
    .option('--log-dir <dir>', 'where the logs are', DEFAULT_LOG_DIR)
    .action(async (flags: LogsFlags) => {
      const minLevel = LOG_LEVEL_NUMBERS[flags.level];
      if (minLevel === undefined)
        throw errors.invalidOption(
          'level',
          'expected trace, debug, info, warn or error',
          flags.level,
        );
      const filter: LogFilter = { minLevel, ...(flags.job ? { job: flags.job } : {}) };
      const liveFile =
        flags.actor !== undefined
          ? actorLogFile(flags.logDir, parseCount(flags.actor, 'actor'))
          : undefined;
      const liveName = liveFile ? basename(liveFile) : undefined;
      const sources = findSources(flags.logDir, liveName);
      if (!flags.follow) {
        if (!existsSync(flags.logDir))
          throw errors.invalidOption('log-dir', `no log directory ${resolve(flags.logDir)}`);
        if (liveName && sources.length === 0)
          throw errors.invalidOption('actor', `no log file ${liveName} in ${flags.logDir}`);
      }
      /** false when stdout's buffer is full */
      const print = ({ text }: TimedLine): boolean => {
        const out = formatLogLine(text, filter);
        return out === null || process.stdout.write(`${out}\n`);
      };
      // Following, Ctrl-C ends cleanly from the start, while what the files hold is still
      // printing too (before, a Ctrl-C then found no handler and killed the process).
      let follower: LogFollower | undefined;
      if (flags.follow) {
        const stop = () => {
          follower?.stop();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }
      const sizes = liveSizes(sources);
      if (liveFile && !sizes.has(liveFile)) sizes.set(liveFile, 0); // followed before it exists
      for await (const line of mergedHistory(sources, sizes)) {
        if (!print(line)) await once(process.stdout, 'drain');
      }
      if (flags.follow) {
        follower = new LogFollower({
          dir: flags.logDir,
          ...(liveName ? { liveName } : {}),
          startSizes: sizes,
          print,
        });
        follower.start();
      }
    });
}
