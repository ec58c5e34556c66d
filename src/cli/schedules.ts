// skyq schedules list | upsert ID (--every 10s | --cron "0 3 * * *") | remove ID: the
// periodic schedules of queue.schedules (src/queue/schedules/).
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import type { ScheduleSpec, ScheduleState } from '../queue/schedules/schedules.js';
import {
  type ConnectionFlags,
  printJson,
  readFromLine,
  withConnectionFlags,
  writeToLine,
} from './common.js';
import { parseCount } from './duration.js';
import { printable } from './preview.js';
import { table } from './table.js';
import { withQueue } from './with-queue.js';

interface UpsertFlags extends ConnectionFlags {
  every?: string;
  cron?: string;
  tz?: string;
  body?: string;
  json?: boolean;
  name?: string;
  priority?: string;
  limit?: string;
  missed?: string;
  group?: string;
}

const time = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

export function describeSchedules(list: ScheduleState[]): string {
  if (list.length === 0) return 'no schedules';
  return table(
    ['id', 'group', 'when', 'name', 'next due', 'last run', 'occurrences'],
    list.map((s) => [
      printable(s.id),
      s.group,
      s.every !== undefined ? `every ${s.every} ms` : `cron "${s.cron}" ${s.tz}`,
      printable(s.name ?? '-'),
      time(s.next),
      time(s.last),
      `${s.count}${s.limit === undefined ? '' : ` of ${s.limit}`}`,
    ]),
  );
}

export function registerSchedules(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('periodic schedules: list, upsert or remove');
  withConnectionFlags(schedules.command('list'))
    .description('every schedule: next due time, last run, occurrences so far')
    .option('--json', 'print JSON')
    .action((flags: ConnectionFlags & { json?: boolean }) =>
      withQueue(flags, async (queue) => {
        const list = await queue.schedules.list();
        if (flags.json) return printJson(list);
        console.log(readFromLine(flags));
        console.log(describeSchedules(list));
      }),
    );
  withConnectionFlags(schedules.command('upsert <id>'))
    .description('create or change a schedule; it takes effect from its next occurrence')
    .option('--every <duration>', 'every 500ms, 10s, 5m, 1h, 1d')
    .option('--cron <pattern>', 'a cron pattern of 5 fields (or 6, seconds first)')
    .option('--tz <zone>', 'IANA time zone of the cron pattern (default UTC)')
    .option('--body <text>', 'body of each occurrence (text; with --json, JSON)')
    .option('--json', 'the body is JSON')
    .option('--name <name>', 'job name of each occurrence')
    .option('--priority <n>', 'priority of each occurrence')
    .option('--limit <n>', 'how many occurrences in all')
    .option('--missed <once|skip>', 'after downtime: one catch-up (once, default) or none (skip)')
    .option('--group <g>', 'the group of the schedule and its occurrences')
    .action((id: string, flags: UpsertFlags) =>
      withQueue(flags, async (queue) => {
        // Built flag by flag, then checked whole by upsert (which names what is missing).
        const spec: Partial<Record<keyof ScheduleSpec, unknown>> = {};
        if (flags.every !== undefined) spec.every = flags.every;
        if (flags.cron !== undefined) spec.cron = flags.cron;
        if (flags.tz !== undefined) spec.tz = flags.tz;
        if (flags.body !== undefined) spec.body = flags.json ? jsonBody(flags.body) : flags.body;
        if (flags.name !== undefined) spec.name = flags.name;
        if (flags.priority !== undefined) spec.priority = parseCount(flags.priority, 'priority');
        if (flags.limit !== undefined) spec.limit = parseCount(flags.limit, 'limit');
        if (flags.missed !== undefined) spec.missed = flags.missed as 'once' | 'skip';
        if (flags.group !== undefined) spec.group = parseCount(flags.group, 'group');
        const state = await queue.schedules.upsert(id, spec as ScheduleSpec);
        console.log(writeToLine(flags));
        console.log(describeSchedules([state]));
      }),
    );
  withConnectionFlags(schedules.command('remove <id>'))
    .description('remove a schedule and its waiting occurrence')
    .action((id: string, flags: ConnectionFlags) =>
      withQueue(flags, async (queue) => {
        console.log(writeToLine(flags));
        if (await queue.schedules.remove(id)) return console.log(`removed schedule ${id}`);
        console.error(`skyq: no schedule ${id}`);
        process.exitCode = 1;
      }),
    );
}

function jsonBody(text: string) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw errors.invalidOption('body', `is not JSON: ${(error as Error).message}`);
  }
}
