// skyq produce: one message per stdin line (like the original producer:
// due in 5 s, `quit` ends it, an over-long line is refused and it goes on),
// or `--count N --spread 5s` for load.
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { AddOptions } from '../add-options.js';
import { Queue } from '../queue.js';
import { type ConnectionFlags, queueOptions, withConnectionFlags } from './common.js';
import { parseCount, parseDuration } from './duration.js';

interface ProduceFlags extends ConnectionFlags {
  delay: string;
  maxLine: string;
  count?: string;
  spread: string;
  bodyBytes: string;
  priority?: string;
  key?: string;
  quiet?: boolean;
}

const BULK = 10_000;

export function registerProduce(program: Command): void {
  withConnectionFlags(program.command('produce'))
    .description('add one message per line of stdin (quit ends), or --count messages for load')
    .option('--delay <duration>', 'delay of each stdin message', '5s')
    .option('--max-line <bytes>', 'longest line accepted', '1024')
    .option('--count <n>', 'add n generated messages instead of reading stdin')
    .option('--spread <duration>', 'with --count: due times spread uniformly over 0..spread', '5s')
    .option('--body-bytes <n>', 'with --count: body size', '100')
    .option('--priority <n>', 'priority of every message (0 first)')
    .option('--key <key>', 'ordering key: every message to the same group')
    .option('--quiet', 'do not print ids')
    .action(async (flags: ProduceFlags) => {
      const queue = new Queue(queueOptions(flags));
      try {
        await queue.ready();
        const common: AddOptions = {};
        if (flags.priority !== undefined) common.priority = parseCount(flags.priority, 'priority');
        if (flags.key !== undefined) common.key = flags.key;
        if (flags.count !== undefined) await produceLoad(queue, flags, common);
        else await produceLines(queue, flags, common);
      } finally {
        await queue.close();
      }
    });
}

async function produceLines(queue: Queue, flags: ProduceFlags, common: AddOptions): Promise<void> {
  const delay = parseDuration(flags.delay, 'delay');
  const maxLine = parseCount(flags.maxLine, 'max-line');
  const interactive = process.stdin.isTTY;
  if (interactive) console.log(`type a message per line (due in ${flags.delay}); quit ends`);
  const lines = createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    if (line.trim() === 'quit') break;
    if (line.length === 0) continue;
    if (Buffer.byteLength(line, 'utf8') > maxLine) {
      console.error(
        `refused: line of ${Buffer.byteLength(line, 'utf8')} bytes is over --max-line ${maxLine}`,
      );
      continue;
    }
    try {
      const id = await queue.add(line, { ...common, delay });
      if (!flags.quiet) console.log(`added ${id}`);
    } catch (error) {
      console.error(`refused: ${(error as Error).message}`);
    }
  }
  lines.close();
}

async function produceLoad(queue: Queue, flags: ProduceFlags, common: AddOptions): Promise<void> {
  const count = parseCount(flags.count as string, 'count');
  const spread = parseDuration(flags.spread, 'spread');
  const body = 'x'.repeat(parseCount(flags.bodyBytes, 'body-bytes'));
  const started = Date.now();
  const runAt = started;
  for (let done = 0; done < count; done += BULK) {
    const size = Math.min(BULK, count - done);
    const items = Array.from({ length: size }, () => ({
      body,
      options: { ...common, runAt: runAt + Math.random() * spread },
    }));
    await queue.addBulk(items);
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `added ${count} messages in ${seconds.toFixed(2)} s (${Math.round(count / seconds)}/s), due over ${flags.spread}`,
  );
}
