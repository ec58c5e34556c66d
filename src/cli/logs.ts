// skyq logs: the per-actor JSON-lines logs, made readable and filtered by
// actor, job id and level; --follow keeps printing new lines like tail -f.
import { existsSync, readdirSync, readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { errors } from '../errors.js';
import { actorLogFile, DEFAULT_LOG_DIR } from '../runtime/logger.js';
import { parseCount } from './duration.js';

const LEVELS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};
const NAMES = Object.fromEntries(
  Object.entries(LEVELS).map(([name, n]) => [n, name.toUpperCase()]),
);
const SHOWN_ELSEWHERE = new Set([
  'level',
  'time',
  'msg',
  'group',
  'event',
  'job',
  'pid',
  'hostname',
]);

interface LogsFlags {
  actor?: string;
  job?: string;
  level: string;
  follow?: boolean;
  logDir: string;
}

export interface LogFilter {
  job?: string;
  minLevel: number;
}

/** One JSON log line as a readable line; null when filtered out or not JSON. */
export function formatLogLine(text: string, filter: LogFilter): string | null {
  let line: Record<string, unknown>;
  try {
    line = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (Number(line.level) < filter.minLevel) return null;
  if (filter.job !== undefined && line.job !== filter.job) return null;
  const time = new Date(Number(line.time)).toISOString().replace('T', ' ').replace('Z', '');
  const level = (NAMES[Number(line.level)] ?? String(line.level)).padEnd(5);
  const who = line.group !== undefined ? `actor ${line.group}` : 'launcher';
  const extra = Object.entries(line)
    .filter(([key]) => !SHOWN_ELSEWHERE.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const job = line.job !== undefined ? ` job=${line.job}` : '';
  return `${time} ${level} ${who} ${line.event ?? '-'}${job} ${line.msg ?? ''}${extra ? ` ${extra}` : ''}`;
}

function logFiles(flags: LogsFlags): string[] {
  if (flags.actor !== undefined) {
    const file = actorLogFile(flags.logDir, parseCount(flags.actor, 'actor'));
    if (!existsSync(file) && !flags.follow)
      throw errors.invalidOption('actor', `no log file ${file}`);
    return [file];
  }
  if (!existsSync(flags.logDir))
    throw errors.invalidOption('log-dir', `no log directory ${flags.logDir}`);
  return readdirSync(flags.logDir)
    .filter((name) => name.endsWith('.log'))
    .sort()
    .map((name) => join(flags.logDir, name));
}

export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description('print the actors’ logs readably')
    .option('--actor <g>', 'only this actor (group)')
    .option('--job <id>', 'only lines about this message id')
    .option('--level <level>', 'lowest level shown: trace, debug, info, warn, error', 'info')
    .option('--follow', 'keep printing new lines')
    .option('--log-dir <dir>', 'where the logs are', DEFAULT_LOG_DIR)
    .action((flags: LogsFlags) => {
      const minLevel = LEVELS[flags.level];
      if (minLevel === undefined)
        throw errors.invalidOption(
          'level',
          'expected trace, debug, info, warn or error',
          flags.level,
        );
      const filter: LogFilter = { minLevel, ...(flags.job ? { job: flags.job } : {}) };
      const files = logFiles(flags);
      // Older lines of several files: merged by time.
      const lines = files.flatMap((file) =>
        existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [],
      );
      const timed = lines
        .map((text) => ({ text, time: Number(/"time":(\d+)/.exec(text)?.[1] ?? 0) }))
        .sort((a, b) => a.time - b.time);
      for (const { text } of timed) {
        const out = formatLogLine(text, filter);
        if (out) console.log(out);
      }
      if (flags.follow) follow(files, filter);
    });
}

function follow(files: string[], filter: LogFilter): void {
  for (const file of files) {
    let offset = existsSync(file) ? statSync(file).size : 0;
    let partial = '';
    watchFile(file, { interval: 200 }, (current) => {
      if (current.size < offset) offset = 0; // truncated or replaced
      if (current.size === offset) return;
      const fresh = readFileSync(file).subarray(offset, current.size).toString('utf8');
      offset = current.size;
      const parts = (partial + fresh).split('\n');
      partial = parts.pop() ?? '';
      for (const text of parts) {
        const out = formatLogLine(text, filter);
        if (out) console.log(out);
      }
    });
  }
  process.on('SIGINT', () => {
    for (const file of files) unwatchFile(file);
    process.exit(0);
  });
}
