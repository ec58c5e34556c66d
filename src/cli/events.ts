// skyq events: the groups' event streams, one line per event (or JSON lines with --json,
// each with its cursor: `--from <cursor>` reads on after it). Without --follow it prints what
// the streams keep and ends; with it, it waits for more until stopped.
import type { Command } from 'commander';
import type { QueueEvent } from '../queue/events/event.js';
import { type ConnectionFlags, readFromLine, withConnectionFlags } from './common.js';
import { parseGroupList } from './duration.js';
import { preview, printable } from './preview.js';
import { readyThroughOutages, withReader } from './with-queue.js';

interface EventsFlags extends ConnectionFlags {
  follow?: boolean;
  group?: string;
  json?: boolean;
  from?: string;
}

export function registerEvents(program: Command): void {
  withConnectionFlags(program.command('events'))
    .description(
      'print events: added, started, done, failed, dead, cancelled, rescheduled, stale, progress (all but done, dead, cancelled and progress need start --events)',
    )
    .option('--follow', 'wait for more events until stopped (from now, unless --from)')
    .option('--group <groups>', 'only these groups, e.g. 3 or 0,3,7')
    .option('--from <where>', "'start' (what the streams keep), 'now', or a cursor from --json")
    .option('--json', 'one JSON object per line, each with the cursor that resumes after it')
    .action((flags: EventsFlags) =>
      withReader(
        flags,
        async (queue) => {
          const follow = flags.follow === true;
          const options = {
            follow,
            from: flags.from ?? (follow ? 'now' : 'start'),
            ...(flags.group !== undefined ? { groups: parseGroupList(flags.group, 'group') } : {}),
          };
          queue.events(options); // bad options are one line before anything connects
          if (follow) await readyThroughOutages(queue);
          else await queue.ready();
          if (!flags.json) console.log(readFromLine(flags));
          const stop = new AbortController();
          process.once('SIGINT', () => stop.abort());
          for await (const event of queue.events({ ...options, signal: stop.signal })) {
            console.log(flags.json ? JSON.stringify(event) : eventLine(event));
          }
        },
        flags.follow ? 'stopped' : 'done',
      ),
    );
}

export function eventLine(event: QueueEvent): string {
  const parts = [
    new Date(event.at).toISOString(),
    `g${event.group}`,
    event.type.padEnd(11),
    printable(event.id),
  ];
  if (event.name !== undefined) parts.push(printable(event.name));
  if (event.type === 'failed') {
    const due = new Date(event.dueAt ?? 0).toISOString();
    parts.push(
      `attempt ${event.attempts} failed: ${preview(event.error ?? '', 120)}; retry at ${due}`,
    );
  }
  if (event.type === 'rescheduled') parts.push(`due ${new Date(event.dueAt ?? 0).toISOString()}`);
  if (event.type === 'progress') parts.push(`progress ${preview(event.progress, 120)}`);
  if (event.reason !== undefined) parts.push(`(${preview(event.reason, 120)})`);
  return parts.join('  ');
}
