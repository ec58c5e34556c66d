// skyq get <id>: where one message is and how it went: state, due time,
// attempts, last error (with its stack), dead reason and a preview of its body.
import type { Command } from 'commander';
import type { FlowTreeNode } from '../queue/flows/read.js';
import type { ChildCounts, MessageInfo } from '../queue/message-info.js';
import { type ConnectionFlags, printJson, readFromLine, withConnectionFlags } from './common.js';
import { parseCount } from './duration.js';
import { NOT_KEPT, preview, printable } from './preview.js';
import { whenText } from './when.js';
import { withReader } from './with-queue.js';

interface GetFlags extends ConnectionFlags {
  group?: string;
  json?: boolean;
  logs?: boolean;
  children?: boolean;
}

const BODY_PREVIEW = 200;
/** a flow parent's children listed one per line, at most */
const CHILD_LINES = 20;

export function registerGet(program: Command): void {
  withConnectionFlags(program.command('get <id>'))
    .description('show one message: state, due time, attempts, last error, body preview')
    .option('--group <g>', 'look only in this group (default: its home group, then all)')
    .option('--json', 'print JSON (the whole body)')
    .option('--logs', "print the job's log lines (its handler's ctx.log, the last 100)")
    .option('--children', `a flow parent: list every child, not the first ${CHILD_LINES}`)
    .action((id: string, flags: GetFlags) =>
      withReader(flags, async (queue) => {
        const options =
          flags.group !== undefined ? { group: parseCount(flags.group, 'group') } : {};
        const info = await queue.get(id, options);
        if (info === null) {
          // A miss is when the Redis read matters most: a wrong server looks just like this.
          if (!flags.json) console.log(readFromLine(flags));
          const until = await queue.dedupeUntil(id, options);
          const window =
            until === null
              ? ''
              : `; its dedupe window is open until ${new Date(until).toISOString()}: adding ${id} changes nothing until then`;
          console.error(
            `skyq: no message ${id} (never added, cancelled or purged, or done and no longer kept)${window}`,
          );
          process.exitCode = 1;
          return;
        }
        // A flow parent: its first children (or all), each with where it stands.
        const lines = flags.children ? (info.children?.total ?? 0) : CHILD_LINES;
        const tree = info.children
          ? await queue.flows.get(info.id, { group: info.group, maxNodes: 1 + lines })
          : null;
        if (flags.json) return printJson(tree ? { ...info, childList: tree.children } : info);
        console.log(readFromLine(flags));
        const now = await queue.clock(info.group).now();
        console.log(describe(info, now, queue.config.prefix, tree?.children));
        if (flags.logs) console.log(logLines(info));
      }),
    );
}

export function describe(
  info: MessageInfo,
  now: number,
  prefix: string,
  children: FlowTreeNode[] = [],
): string {
  const rows: [string, string][] = [
    ['id', printable(info.id)],
    ['group', `${info.group} (${prefix}:${info.group})`],
    ['state', info.state],
    ...(info.name === undefined ? [] : [['name', printable(info.name)] as [string, string]]),
    ...(info.schedule === undefined
      ? []
      : [
          [
            'schedule',
            `${printable(info.schedule.id)} at ${new Date(info.schedule.at).toISOString()}`,
          ] as [string, string],
        ]),
    ['due', info.dueAt === null ? '-' : whenText(info.dueAt, now)],
    ['priority', String(info.priority)],
    ['attempts', `${info.attempts} of ${info.maxAttempts}`],
    [
      'enqueued',
      info.enqueuedAt === null ? `- (${addedBy(info)})` : whenText(info.enqueuedAt, now),
    ],
    ['last error', info.lastError === null ? '-' : preview(info.lastError, BODY_PREVIEW)],
    ...(info.lastErrorStack === null
      ? []
      : [['error stack', frames(info.lastErrorStack)] as [string, string]]),
    ['dead reason', info.deadReason === null ? '-' : preview(info.deadReason, BODY_PREVIEW)],
    // A body not kept is null too: say so, or it reads as a JSON null body.
    ['body', info.bodyKept === false ? NOT_KEPT : preview(info.body, BODY_PREVIEW)],
  ];
  if (info.progress !== undefined) rows.push(['progress', progressText(info.progress)]);
  if (info.logCount !== undefined) {
    const kept = info.logs?.length ?? 0;
    const shown = kept === info.logCount ? `${kept}` : `the last ${kept} of ${info.logCount}`;
    rows.push(['logs', `${shown} line${info.logCount === 1 ? '' : 's'} (--logs prints them)`]);
  }
  if (info.state === 'done') rows.push(...doneRows(info, now));
  if (info.dedupeUntil !== undefined) rows.push(['dedupe until', whenText(info.dedupeUntil, now)]);
  if (info.parent) {
    const optional = info.parent.optional ? ', optional' : '';
    rows.push(['parent', `${printable(info.parent.id)} (group ${info.parent.group}${optional})`]);
  }
  if (info.children)
    rows.push(['children', countsText(info.children)], ...childRows(info, children));
  const width = Math.max(...rows.map(([name]) => name.length));
  // A value of several lines (a stack) goes on under its first, in the value column.
  const under = `\n${' '.repeat(width + 2)}`;
  return rows
    .map(([name, value]) => `${name.padEnd(width)}  ${value.replaceAll('\n', under)}`)
    .join('\n');
}

/** "3: 2 done, 1 active": a flow parent's children by state. */
function countsText(counts: ChildCounts): string {
  const { total, ...states } = counts;
  const parts = Object.entries(states)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  return `${total}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}

/** One line per child (the first CHILD_LINES): its id, where it stands, its name. */
function childRows(info: MessageInfo, children: FlowTreeNode[]): [string, string][] {
  const rows = children.map((child): [string, string] => {
    const name = child.name === undefined ? '' : `  ${printable(child.name)}`;
    const optional = child.optional ? '  (optional)' : '';
    return ['', `- ${printable(child.id)}  ${child.state}${name}${optional}`];
  });
  const more = (info.children?.total ?? 0) - children.length;
  if (more > 0) rows.push(['', `… and ${more} more (--children lists them all)`]);
  return rows;
}

/** A stack's lines as they are, each made printable (no control character reaches the terminal). */
const frames = (stack: string): string =>
  stack
    .split('\n')
    .map((line) => printable(line.trim()))
    .join('\n');

/** Who added a message whose record has no enqueue time. */
const addedBy = (info: MessageInfo): string =>
  info.schedule === undefined
    ? 'added by another client'
    : `added by schedule ${printable(info.schedule.id)}`;

/** A kept job: when it finished, how long it ran, and what it returned. */
function doneRows(info: MessageInfo, now: number): [string, string][] {
  const result =
    info.resultKept === 'truncated'
      ? `(not kept: ${info.resultBytes} bytes, over the limit)`
      : info.resultKept === 'value'
        ? preview(info.result, BODY_PREVIEW)
        : '-';
  return [
    ['finished', info.finishedAt === undefined ? '-' : whenText(info.finishedAt, now)],
    ['duration', `${info.durationMs ?? 0} ms`],
    ['result', result],
  ];
}

/** A percentage as such, any other progress as JSON. */
const progressText = (progress: unknown): string =>
  typeof progress === 'number' ? `${progress} %` : preview(progress, BODY_PREVIEW);

/** The job's kept log lines, each made safe to print; a line that says so when there are none. */
export function logLines(info: MessageInfo): string {
  const lines = info.logs ?? [];
  if (lines.length === 0) return '(no log lines)';
  const dropped = (info.logCount ?? lines.length) - lines.length;
  const head = dropped > 0 ? [`(${dropped} earlier line${dropped === 1 ? '' : 's'} not kept)`] : [];
  return [...head, ...lines.map(printable)].join('\n');
}
