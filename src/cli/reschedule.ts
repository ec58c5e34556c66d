// skyq reschedule <id> --delay 10m | --at 2030-01-31T09:00:00Z: a new due time
// for a delayed or ready message.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { type ConnectionFlags, withConnectionFlags, writeToLine } from './common.js';
import { parseCount, parseDuration, readTime } from './duration.js';
import { localTimeText, relativeTime, whenText } from './when.js';
import { withQueue } from './with-queue.js';

interface RescheduleFlags extends ConnectionFlags {
  delay?: string;
  at?: string;
  group?: string;
}

export function registerReschedule(program: Command): void {
  withConnectionFlags(program.command('reschedule <id>'))
    .description('give a delayed or ready message a new due time (--delay or --at)')
    .option('--delay <duration>', 'due this long from now: 500ms, 5s, 2m, 1h')
    .option('--at <time>', 'due at an ISO time (local unless Z or an offset) or epoch ms')
    .option('--group <g>', 'look only in this group')
    .action((id: string, flags: RescheduleFlags) => {
      const { due, local } = dueOf(flags);
      const group = flags.group !== undefined ? { group: parseCount(flags.group, 'group') } : {};
      return withQueue(flags, async (queue) => {
        const moved = await queue.reschedule(id, { ...due, ...group });
        console.log(writeToLine(flags));
        if (!moved) {
          console.error(`skyq: ${id}: not found, running or dead (nothing rescheduled)`);
          process.exitCode = 1;
          return;
        }
        const info = await queue.get(id, group);
        if (info?.dueAt == null) return console.log(`rescheduled ${id}: due now`);
        const now = await queue.clock(info.group).now();
        // Read as local time: answered in the same zone, named, so no one mistakes the hour.
        const when = local
          ? `${localTimeText(info.dueAt)}, ${relativeTime(info.dueAt, now)}`
          : whenText(info.dueAt, now);
        console.log(`rescheduled ${id}: due ${when}`);
      });
    });
}

function dueOf(flags: RescheduleFlags): {
  due: { delay: number } | { runAt: number };
  local: boolean;
} {
  if ((flags.delay === undefined) === (flags.at === undefined))
    throw errors.invalidOption('delay/at', 'give exactly one of --delay and --at');
  if (flags.delay !== undefined)
    return { due: { delay: parseDuration(flags.delay, 'delay') }, local: false };
  const at = readTime(flags.at as string, 'at');
  return { due: { runAt: at.ms }, local: at.local };
}
