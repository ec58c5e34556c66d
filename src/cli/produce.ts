// skyq produce: one message per stdin line (like the original producer:
// due in 5 s, `quit` ends it, a refused line is reported and it goes on),
// --json for one JSON object per line, or `--count N --spread 5s` for load.
// Messages without a key or id go round-robin over the groups from the
// Queue's own starting point, so several producers share the groups.
import type { Command } from 'commander';
import type { AddOptions } from '../queue/add-options.js';
import { checkName } from '../queue/options.js';
import type { Queue } from '../queue/queue.js';
import { type ConnectionFlags, withConnectionFlags, writeToLine } from './common.js';
import { describeMs, parseCount, parseDuration } from './duration.js';
import { type ProduceItem, parseJsonLine } from './produce-json.js';
import { LOAD_HELP, type LoadFlags, loadOf, produceLoad } from './produce-load.js';
import { readLines } from './stdin-lines.js';
import { withQueue } from './with-queue.js';

interface ProduceFlags extends ConnectionFlags, LoadFlags {
  delay?: string;
  maxLine: string;
  json?: boolean;
  priority?: string;
  key?: string;
  name?: string;
  quiet?: boolean;
}

const LINE_DELAY = '5s';

export function registerProduce(program: Command): void {
  withConnectionFlags(program.command('produce'))
    .description(
      'add one message per line of stdin (quit ends), one JSON object per line (--json), or --count messages for load',
    )
    .option(
      '--delay <duration>',
      `delay of each message: 500ms, 5s, 2m, 1h (default: ${LINE_DELAY} for lines, 0 with --count)`,
    )
    .option('--priority <n>', 'priority of every message, 0..1000000 (0 first)')
    .option('--key <key>', 'ordering key: every message to the same group, in order')
    .option('--name <name>', "job name of every message (a command table handler's entry)")
    .option(
      '--json',
      'each line is {"body":…, "delay":"5s"|ms, "priority":n, "key":"…", "id":"…", "name":"…", "dedupe":"10m"|ms}',
    )
    .option('--max-line <bytes>', 'longest line accepted', '1024')
    .option('--count <n>', 'add n generated messages instead of reading stdin')
    .option('--spread <duration>', LOAD_HELP.spread)
    .option('--body-bytes <n>', LOAD_HELP.bodyBytes)
    .option('--at-once', LOAD_HELP.atOnce)
    .option('--quiet', 'print nothing but errors (no ids, no --count summary)')
    .action(async (flags: ProduceFlags) => {
      // Every flag is checked before connecting, in every mode.
      const common: AddOptions = {
        delay: parseDuration(
          flags.delay ?? (flags.count === undefined ? LINE_DELAY : '0'),
          'delay',
        ),
      };
      if (flags.priority !== undefined) common.priority = parseCount(flags.priority, 'priority');
      if (flags.key !== undefined) common.key = flags.key;
      if (flags.name !== undefined) common.name = checkName('name', flags.name);
      const maxLine = parseCount(flags.maxLine, 'max-line');
      const load = loadOf(flags);
      // Reading lines, produce runs until its input ends: like a launcher it keeps reconnecting
      // through an outage (a line typed meanwhile is refused once Redis has been away for 5 s,
      // with the reason), where a one-shot command gives up after three quick attempts.
      await withQueue(
        flags,
        async (queue) => {
          await queue.ready();
          if (!flags.quiet) console.log(writeToLine(flags));
          if (load) await produceLoad(queue, load, common, flags.quiet === true);
          else await produceLines(queue, flags, common, maxLine);
        },
        load ? 'done' : 'stopped',
      );
    });
}

async function produceLines(
  queue: Queue,
  flags: ProduceFlags,
  common: AddOptions,
  maxLine: number,
): Promise<void> {
  if (process.stdin.isTTY) {
    const what = flags.json ? 'JSON object' : 'message';
    console.log(
      `type a ${what} per line (due in ${describeMs(Number(common.delay ?? 0))}); quit ends`,
    );
  }
  let refused = 0;
  let read = 0;
  const refuse = (number: number, problem: string) => {
    refused++;
    console.error(`refused line ${number}: ${problem}`);
  };
  for await (const line of readLines(process.stdin, maxLine)) {
    if ('problem' in line) {
      read++;
      refuse(line.number, line.problem);
      continue;
    }
    if (line.text.trim() === 'quit') break;
    if (line.text.length === 0) continue;
    read++;
    try {
      const item: ProduceItem = flags.json
        ? parseJsonLine(line.text, common)
        : { body: line.text, options: common };
      const id = await queue.add(item.body, item.options);
      if (!flags.quiet) console.log(`added ${id}`);
    } catch (error) {
      refuse(line.number, (error as Error).message);
    }
  }
  if (refused > 0) {
    console.error(`skyq: refused ${refused} of ${read} line(s)`);
    process.exitCode = 1;
  }
}
