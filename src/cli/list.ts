// skyq list <state>: a page of the messages in one state (queue.list), and the command that
// prints the next page. With --id-prefix a page looks at a bounded number of entries, so it may
// be short (even empty) and still have a next page. The id prefix is --id-prefix: --prefix is
// the key prefix every command takes.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { LIST_STATES, type ListState } from '../queue/browse/cursor.js';
import type { ListItem } from '../queue/browse/item.js';
import type { PageOrder } from '../queue/page-order.js';
import {
  againFlags,
  type ConnectionFlags,
  printJson,
  readFromLine,
  shellWord,
  withConnectionFlags,
} from './common.js';
import { parseCount } from './duration.js';
import { NOT_KEPT, preview, printable } from './preview.js';
import { table } from './table.js';
import { withReader } from './with-queue.js';

/** characters of a body the table shows */
const BODY_COLUMN = 40;

interface ListFlags extends ConnectionFlags {
  group?: string;
  order?: string;
  idPrefix?: string;
  limit: string;
  after?: string;
  json?: boolean;
}

/** The time a row shows beside its due time: lease end, finish or death. */
function when(item: ListItem): string {
  const at = item.leaseUntil ?? item.finishedAt ?? item.diedAt;
  return at === undefined ? '' : new Date(at).toISOString();
}

/** The body column: its start, or that a done job's big body was not kept (its preview is ''). */
const bodyText = (item: ListItem): string =>
  item.bodyKept === false
    ? NOT_KEPT
    : preview(item.truncated ? `${item.preview}…` : item.preview, BODY_COLUMN);

const iso = (ms: number | null) =>
  ms === null ? '–' : ms >= 9e15 ? 'never' : new Date(ms).toISOString();

export function registerList(program: Command): void {
  withConnectionFlags(program.command('list <state>'))
    .description(`a page of messages in one state (${LIST_STATES.join(', ')}), by cursor`)
    .option('--group <g>', 'only this group')
    .option('--id-prefix <p>', 'only ids that start with this (--prefix is the key prefix)')
    .option('--limit <n>', 'how many (at most 500)', '50')
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .option('--order <o>', 'newest or oldest first (default: newest for done and dead)')
    .option('--json', 'print JSON: { items, cursor }')
    .action((state: string, flags: ListFlags) => {
      if (!LIST_STATES.includes(state as ListState)) {
        throw errors.invalidOption('state', `must be one of ${LIST_STATES.join(', ')}`, state);
      }
      return withReader(flags, async (queue) => {
        const page = await queue.list(state as ListState, {
          ...(flags.group !== undefined ? { group: parseCount(flags.group, 'group') } : {}),
          ...(flags.idPrefix !== undefined ? { prefix: flags.idPrefix } : {}),
          ...(flags.after !== undefined ? { cursor: flags.after } : {}),
          ...(flags.order !== undefined ? { order: flags.order as PageOrder } : {}),
          limit: parseCount(flags.limit, 'limit'),
        });
        if (flags.json) return printJson(page);
        const again = [
          'skyq list',
          state,
          ...againFlags(flags),
          ...(flags.group !== undefined ? ['--group', flags.group] : []),
          ...(flags.idPrefix !== undefined ? ['--id-prefix', shellWord(flags.idPrefix)] : []),
          ...(flags.limit !== '50' ? ['--limit', flags.limit] : []),
        ].join(' ');
        const more = page.cursor ? `more: ${again} --after ${page.cursor}` : null;
        console.log(readFromLine(flags));
        if (page.items.length === 0) console.log(`no ${state} messages on this page`);
        else {
          const last = { active: 'lease ends', done: 'finished', dead: 'died' }[state] ?? '';
          console.log(
            table(
              ['id', 'group', 'name', 'due', 'attempts', ...(last ? [last] : []), 'body'],
              page.items.map((item) => [
                printable(item.id),
                item.group,
                printable(item.name ?? ''),
                iso(item.dueAt),
                item.attempts,
                ...(last ? [when(item)] : []),
                bodyText(item),
              ]),
              { leftAlign: [0, 2, 3, ...(last ? [5, 6] : [5])] },
            ),
          );
        }
        if (more) console.log(more);
      });
    });
}
