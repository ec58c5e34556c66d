// skyq dlq list|retry|purge: look at and act on dead letters.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { errors, SkyqError } from '../base/errors.js';
import type { PageOrder } from '../queue/page-order.js';
import type { Queue } from '../queue/queue.js';
import {
  againFlags,
  type ConnectionFlags,
  printJson,
  readFromLine,
  withConnectionFlags,
  writeToLine,
} from './common.js';
import { deadByIds, idsOf } from './dlq-ids.js';
import { parseCount } from './duration.js';
import { preview, printable } from './preview.js';
import { table } from './table.js';
import { withQueue, withReader } from './with-queue.js';

/** characters of a body the table shows */
const BODY_COLUMN = 40;

interface DlqFlags extends ConnectionFlags {
  group?: string;
  order?: string;
  ids?: string;
  limit: string;
  after?: string;
  json?: boolean;
  yes?: boolean;
}

function selection(flags: DlqFlags) {
  return {
    ...(flags.group !== undefined ? { group: parseCount(flags.group, 'group') } : {}),
    ...(flags.ids !== undefined ? { ids: idsOf(flags.ids) } : {}),
  };
}

/** `dlq list`: the dead letters --ids names, or a page of them all (and the next page's hint). */
async function listed(queue: Queue, flags: DlqFlags, chosen: ReturnType<typeof selection>) {
  const { group, ids } = chosen;
  if (ids) return { ...(await deadByIds(queue, ids, group, flags.order)), more: null };
  const { letters, next } = await queue.deadLetters.page({
    ...(group !== undefined ? { group } : {}),
    ...(flags.after !== undefined ? { after: flags.after } : {}),
    ...(flags.order !== undefined ? { order: flags.order as PageOrder } : {}),
    limit: parseCount(flags.limit, 'limit'),
    // The table shows 40 characters of a body: read no more than that of big ones.
    ...(flags.json ? {} : { previewBytes: BODY_COLUMN * 4 }),
  });
  const again = [
    'skyq dlq list',
    ...againFlags(flags),
    ...(flags.group !== undefined ? ['--group', flags.group] : []),
    ...(flags.limit !== '50' ? ['--limit', flags.limit] : []),
  ].join(' ');
  return { letters, notFound: [], more: next ? `more: ${again} --after ${next}` : null };
}

/** Ids the CLI did not find among the dead letters: on stderr, and exit 1. */
function tellNotFound(notFound: (string | Buffer)[], group: number | undefined): void {
  if (notFound.length === 0) return;
  const where = group === undefined ? '' : ` in group ${group}`;
  console.error(
    `skyq: not found among the dead letters${where}: ${notFound.map((id) => printable(String(id))).join(', ')}`,
  );
  process.exitCode = 1;
}

export function registerDlq(program: Command): void {
  const dlq = program.command('dlq').description('dead letters: list, retry or purge');
  withConnectionFlags(dlq.command('list'))
    .description('dead letters, newest first, with reason and last error')
    .option('--group <g>', 'only this group')
    .option('--limit <n>', 'how many', '50')
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .option('--order <o>', 'newest (the default) or oldest first')
    .option('--ids <ids>', 'only these ids, comma separated (not with --limit or --after)')
    .option('--json', 'print JSON (the letters; the next cursor goes to stderr)')
    .action((flags: DlqFlags, command: Command) => {
      // --ids names the letters: there is no page to size or to go on from.
      const paging =
        command.getOptionValueSource('limit') === 'cli'
          ? '--limit'
          : flags.after !== undefined
            ? '--after'
            : null;
      if (flags.ids !== undefined && paging) {
        throw errors.invalidOption('ids', `lists just those dead letters: drop ${paging}`);
      }
      const chosen = selection(flags);
      return withReader(flags, async (queue) => {
        const { letters, notFound, more } = await listed(queue, flags, chosen);
        if (flags.json) {
          printJson(letters);
          if (more) console.error(more);
          return tellNotFound(notFound, chosen.group);
        }
        console.log(readFromLine(flags));
        tellNotFound(notFound, chosen.group);
        if (letters.length === 0) return console.log('no dead letters');
        console.log(
          table(
            ['id', 'group', 'died', 'attempts', 'reason', 'last error', 'body'],
            letters.map((l) => [
              l.id,
              l.group,
              new Date(l.diedAt).toISOString(),
              l.attempts,
              printable(l.reason),
              printable(l.lastError ?? ''),
              preview(l.body, BODY_COLUMN),
            ]),
            // Figures (group, attempts) right, text (time, reason, error, body) left.
            { leftAlign: [2, 4, 5, 6] },
          ),
        );
        if (more) console.log(more);
      });
    });
  for (const [name, what] of [
    ['retry', 'put dead letters back to work'],
    ['purge', 'delete dead letters for good'],
  ] as const) {
    const command = withConnectionFlags(dlq.command(name))
      .description(`${what} (all, or --group / --ids)`)
      .option('--group <g>', 'only this group')
      .option('--ids <ids>', 'only these ids, comma separated');
    if (name === 'purge') command.option('--yes', 'purge every dead letter without asking');
    command.action((flags: DlqFlags) => {
      const chosen = selection(flags);
      const ask = name === 'purge' && !flags.yes && !chosen.ids && chosen.group === undefined;
      // With nobody to ask (a pipe, a script), purging everything takes --yes.
      if (ask && !process.stdin.isTTY) {
        console.error(
          'skyq: dlq purge with no --group or --ids deletes every dead letter; stdin is not a terminal to ask, so nothing was purged: add --yes',
        );
        process.exitCode = 1;
        return;
      }
      return withQueue(flags, async (queue) => {
        if (ask && !(await confirmPurgeAll(queue))) return console.log('purged nothing');
        const { count, notFound } = await queue.deadLetters.act(name, chosen);
        console.log(writeToLine(flags));
        console.log(`${name === 'retry' ? 'retried' : 'purged'} ${count} dead letter(s)`);
        tellNotFound(notFound, chosen.group);
      });
    });
  }
}

/** `dlq purge` with no selection deletes every dead letter: on a terminal it asks first, as the dashboard does. */
async function confirmPurgeAll(queue: Queue): Promise<boolean> {
  const dead = (await queue.counts()).reduce((sum, group) => sum + group.dead, 0);
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await prompt.question(
      `purge all ${dead} dead letter(s) in every group, for good? [y/N] `,
    );
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}

export function registerCancel(program: Command): void {
  withConnectionFlags(program.command('cancel <id>'))
    .description(
      'cancel a delayed or ready message, or a waiting flow parent with its pending children',
    )
    .action((id: string, flags: ConnectionFlags) =>
      withQueue(flags, async (queue) => {
        const done = await queue.cancel(id).catch((error: unknown) => {
          // A flow's refusal came from Redis: say which one, as for any other answer.
          if (error instanceof SkyqError && error.code === 'ERR_SKYQ_FLOW')
            console.log(writeToLine(flags));
          throw error;
        });
        console.log(writeToLine(flags));
        // A refusal goes where every other command's does: one "skyq:" line on stderr.
        if (done) console.log(`cancelled ${id}`);
        else {
          console.error(`skyq: ${id}: not found, running or dead (nothing cancelled)`);
          process.exitCode = 1;
        }
      }),
    );
}
