// skyq pause|resume [--group g]: stop or restart claiming in one group or all.
// The flag lives in Redis, so every launcher on every host honours it.
import type { Command } from 'commander';
import { type ConnectionFlags, withConnectionFlags, writeToLine } from './common.js';
import { parseCount } from './duration.js';
import { withQueue } from './with-queue.js';

interface PauseFlags extends ConnectionFlags {
  group?: string;
}

export function registerPause(program: Command): void {
  for (const [name, done, already, what] of [
    [
      'pause',
      'paused',
      'already paused',
      'stop claiming (running handlers finish); every launcher honours it',
    ],
    ['resume', 'resumed', 'not paused', 'claim again after pause'],
  ] as const) {
    withConnectionFlags(program.command(name))
      .description(`${what}: one group or all`)
      .option('--group <g>', 'only this group (default: all)')
      .action((flags: PauseFlags) =>
        withQueue(flags, async (queue) => {
          const group = flags.group !== undefined ? parseCount(flags.group, 'group') : undefined;
          const asked = group === undefined ? queue.config.groups : 1;
          const changed = await queue[name](group);
          console.log(writeToLine(flags));
          const prefix = queue.config.prefix;
          const names = (groups: number[]) =>
            groups.length === 1
              ? `${prefix}:${groups[0]}`
              : `${groups.length} groups (${prefix}:${groups.join(',')})`;
          if (changed.length > 0) console.log(`${done} ${names(changed)}`);
          const unchanged = asked - changed.length;
          if (unchanged > 0) {
            const which = group === undefined ? `${unchanged} group(s)` : `${prefix}:${group}`;
            console.log(`${which} ${already}: nothing changed there`);
          }
        }),
      );
  }
}
