// One JSON log line as a readable line:
//   2030-01-31 09:00:00.123 INFO  actor 3 consumed job=3:17 body=hello lateMs=2
// The event name leads unless the message already says it ("actor stopped" is
// shown as "stopped", "handler failed" with event "dead" as "dead: handler failed").
import { printable } from './preview.js';

export const LOG_LEVEL_NUMBERS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};
const LEVEL_NAMES = Object.fromEntries(
  Object.entries(LOG_LEVEL_NUMBERS).map(([name, n]) => [n, name.toUpperCase()]),
);
const SHOWN_ELSEWHERE = new Set([
  'level',
  'time',
  'msg',
  'group',
  'event',
  'job',
  'pid',
  'hostname',
  'launcher',
  'stack',
]);

export interface LogFilter {
  job?: string;
  minLevel: number;
}

/** The time of a JSON log line without parsing all of it; 0 when it has none. */
export function lineTime(text: string): number {
  return Number(/"time":(\d+)/.exec(text)?.[1] ?? 0);
}

/** One JSON log line as a readable line; null when filtered out or not JSON. */
export function formatLogLine(text: string, filter: LogFilter): string | null {
  let line: Record<string, unknown>;
  try {
    line = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof line !== 'object' || line === null) return null;
  if (Number(line.level) < filter.minLevel) return null;
  if (filter.job !== undefined && line.job !== filter.job) return null;
  const time = new Date(Number(line.time)).toISOString().replace('T', ' ').replace('Z', '');
  const level = (LEVEL_NAMES[Number(line.level)] ?? String(line.level)).padEnd(5);
  const who =
    line.group !== undefined ? `actor ${line.group}` : line.intake === true ? 'intake' : 'launcher';
  const what = describeEvent(line.event, line.msg);
  const job = line.job !== undefined ? ` job=${printable(String(line.job))}` : '';
  const extra = Object.entries(line)
    .filter(([key]) => !SHOWN_ELSEWHERE.has(key))
    .map(([key, value]) => `${key}=${fieldText(value)}`)
    .join(' ');
  // A failed handler's stack follows its line, indented, one frame a line.
  const stack =
    typeof line.stack === 'string' && line.stack !== ''
      ? `\n${line.stack
          .split('\n')
          .map((frame) => `    ${printable(frame.trim())}`)
          .join('\n')}`
      : '';
  return `${time} ${level} ${who} ${what}${job}${extra ? ` ${extra}` : ''}${stack}`;
}

/** The event and the message, without saying the same word twice. */
export function describeEvent(event: unknown, msg: unknown): string {
  // "actor 3 crashed" / "launcher started": the subject is already in the line.
  const text = printable(String(msg ?? '')).replace(/^(actor( \d+)?|launcher) /, '');
  if (typeof event !== 'string' || event === '') return text || '-';
  if (text === '') return event;
  const escaped = event.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\b${escaped}`, 'i').test(text) ? text : `${event}: ${text}`;
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return printable(value);
  // pino serialises errors as { type, message, stack }: the message is what a reader needs.
  if (typeof value === 'object' && value !== null && typeof (value as Error).message === 'string')
    return printable((value as Error).message);
  return printable(JSON.stringify(value) ?? String(value));
}
