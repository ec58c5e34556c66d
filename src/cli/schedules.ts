// skyq schedules list | upsert ID (--every 10s | --cron "0 3 * * *") | preview [ID] | remove ID:
// the periodic schedules of queue.schedules (src/queue/schedules/).
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
import { parseCount, parseTime } from './duration.js';
import { preview, printable } from './preview.js';
import { runText, timingText, zoneOf } from './schedule-text.js';
import { table } from './table.js';
import { withQueue, withReader } from './with-queue.js';

interface SpecFlags {
  every?: string;
  cron?: string;
  tz?: string;
}

interface UpsertFlags extends ConnectionFlags, SpecFlags {
  body?: string;
  bodyJson?: string;
  json?: boolean;
  name?: string;
  priority?: string;
  limit?: string;
  missed?: string;
  group?: string;
}

interface PreviewFlags extends ConnectionFlags, SpecFlags {
  count?: string;
  from?: string;
  json?: boolean;
}

/** The schedules as a table; times in each one's zone, `now` on Redis's clock. */
export function describeSchedules(list: ScheduleState[], now: number): string {
  if (list.length === 0) return 'no schedules';
  const time = (s: ScheduleState, at: number | undefined) =>
    at === undefined ? '-' : runText(at, zoneOf(s), now);
  return table(
    ['id', 'group', 'when', 'name', 'next due', 'last run', 'occurrences', 'body'],
    list.map((s) => [
      printable(s.id),
      s.group,
      timingText(s),
      printable(s.name ?? '-'),
      time(s, s.next),
      time(s, s.last),
      `${s.count}${s.limit === undefined ? '' : ` of ${s.limit}`}`,
      preview(s.body ?? null, 40),
    ]),
    { leftAlignLast: true, leftAlign: [2, 3, 4, 5] },
  );
}

const withSpecFlags = (command: Command): Command =>
  command
    .option('--every <duration>', 'every 500ms, 10s, 5m, 1h, 1d')
    .option('--cron <pattern>', 'a cron pattern of 5 fields (or 6, seconds first)')
    .option('--tz <zone>', 'IANA time zone of the cron pattern (default UTC)');

/** The timing flags given, as a spec's fields (upsert and preview check the whole). */
function specOf(flags: SpecFlags): Partial<Record<'every' | 'cron' | 'tz', string>> {
  const spec: Partial<Record<'every' | 'cron' | 'tz', string>> = {};
  if (flags.every !== undefined) spec.every = flags.every;
  if (flags.cron !== undefined) spec.cron = flags.cron;
  if (flags.tz !== undefined) spec.tz = flags.tz;
  return spec;
}

export function registerSchedules(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('periodic schedules: list, upsert, preview or remove');
  withConnectionFlags(schedules.command('list'))
    .description('every schedule: next due time, last run, occurrences so far, body')
    .option('--json', 'print JSON')
    .action((flags: ConnectionFlags & { json?: boolean }) =>
      withReader(flags, async (queue) => {
        const list = await queue.schedules.list();
        if (flags.json) return printJson(list);
        console.log(readFromLine(flags));
        console.log(describeSchedules(list, await queue.clock(0).now()));
      }),
    );
  withSpecFlags(withConnectionFlags(schedules.command('upsert <id>')))
    .description('create or change a schedule; it takes effect from its next occurrence')
    .option('--body <text>', 'body of each occurrence, as text')
    .option('--body-json <json>', 'body of each occurrence, as JSON')
    .option('--json', 'print the schedule as JSON (not beside --body: use --body-json)')
    .option('--name <name>', 'job name of each occurrence')
    .option('--priority <n>', 'priority of each occurrence')
    .option('--limit <n>', 'how many occurrences in all')
    .option('--missed <once|skip>', 'after downtime: one catch-up (once, default) or none (skip)')
    .option('--group <g>', 'the group of a new schedule and its occurrences (default: it stays)')
    .action((id: string, flags: UpsertFlags) =>
      withQueue(flags, async (queue) => {
        // Built flag by flag, then checked whole by upsert (which names what is missing).
        const spec = { ...specOf(flags), ...bodyOf(flags) } as ScheduleSpec;
        if (flags.name !== undefined) spec.name = flags.name;
        if (flags.priority !== undefined) spec.priority = parseCount(flags.priority, 'priority');
        if (flags.limit !== undefined) spec.limit = parseCount(flags.limit, 'limit');
        if (flags.missed !== undefined) spec.missed = flags.missed as 'once' | 'skip';
        if (flags.group !== undefined) spec.group = parseCount(flags.group, 'group');
        const state = await queue.schedules.upsert(id, spec);
        if (flags.json) return printJson(state);
        console.log(writeToLine(flags));
        console.log(describeSchedules([state], await queue.clock(state.group).now()));
      }),
    );
  withSpecFlags(withConnectionFlags(schedules.command('preview [id]')))
    .description('the next run times of a schedule (its id) or of a spec (--every, --cron)')
    .option('--count <n>', 'how many (default 10)')
    .option('--from <time>', 'from an ISO time (local unless Z or an offset) or epoch ms')
    .option('--json', 'print the run times as JSON (epoch ms)')
    .action((id: string | undefined, flags: PreviewFlags) =>
      withReader(flags, async (queue) => {
        const spec = specOf(flags);
        if ((id === undefined) === (Object.keys(spec).length === 0))
          throw errors.invalidOption('id', 'give a schedule id, or a spec (--every or --cron)');
        const options = {
          ...(flags.count === undefined ? {} : { count: parseCount(flags.count, 'count') }),
          ...(flags.from === undefined ? {} : { from: parseTime(flags.from, 'from') }),
        };
        const runs = await queue.schedules.preview(id ?? (spec as ScheduleSpec), options);
        if (flags.json) return printJson(runs);
        const shown = id === undefined ? spec : await queue.schedules.get(id);
        const zone = zoneOf({ tz: 'UTC', ...shown });
        const now = await queue.clock(0).now();
        console.log(readFromLine(flags)); // Redis's clock, and the schedule when named, came from there
        if (runs.length === 0) return console.log('no runs left');
        for (const at of runs) console.log(runText(at, zone, now));
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

/** --body (text) or --body-json; --json once meant the latter, and now prints JSON. */
function bodyOf(flags: UpsertFlags): Pick<ScheduleSpec, 'body'> {
  if (flags.body !== undefined && flags.bodyJson !== undefined)
    throw errors.invalidOption('body', 'give --body (text) or --body-json, not both');
  if (flags.body !== undefined && flags.json)
    throw errors.invalidOption(
      'json',
      'now prints the schedule as JSON, and no longer makes --body JSON: give a JSON body as --body-json (a text body as --body-json \'"text"\' to print JSON)',
    );
  if (flags.body !== undefined) return { body: flags.body };
  if (flags.bodyJson === undefined) return {};
  try {
    return { body: JSON.parse(flags.bodyJson) };
  } catch (error) {
    throw errors.invalidOption('body-json', `is not JSON: ${(error as Error).message}`);
  }
}
