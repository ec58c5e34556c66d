// Progress and log lines from running jobs (lua/report.lua): what a handler may report, the
// script's arguments for a batch of them, and how get() reads them back. The runtime batches a
// handler's ctx.progress and ctx.log calls (src/runtime/reports.ts); queue.progress() and
// queue.log() send one at a time, for consumers of the primitives.
import { errors } from '../base/errors.js';
import type { QueueConfig } from './config.js';
import { keyOf, type Message } from './message.js';
import { checkGroup } from './options.js';

/** The most bytes of a progress value's JSON text. */
export const PROGRESS_MAX_BYTES = 4096;
/** The most bytes (UTF-8) of one log line. */
export const LOG_LINE_MAX_BYTES = 1024;
/** How many of a job's last log lines are kept. */
export const LOG_LINES_KEPT = 100;

/** What one job reported since its last report call: sent together. */
export interface PendingReport {
  /** the last progress given, as JSON text; null when none */
  progress: string | null;
  /** lines logged, the ones not kept included */
  logged: number;
  /** the last LOG_LINES_KEPT of them */
  lines: string[];
}

/** What report.lua did: how many jobs' reports it stored, and the ids it refused (lease lost). */
export interface ReportOutcome {
  reported: number;
  refused: string[];
}

/**
 * A progress value as the JSON text that is stored: a number from 0 to 100 (a percentage), or
 * any other JSON value up to PROGRESS_MAX_BYTES. Throws a one-line SkyqError otherwise.
 */
export function progressText(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > 100)
      throw errors.invalidOption(
        'progress',
        'a number must be from 0 to 100 (a percentage)',
        value,
      );
    return String(value);
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined)
    throw errors.invalidOption('progress', 'must be a number from 0 to 100 or a JSON value', value);
  const bytes = Buffer.byteLength(text);
  if (bytes > PROGRESS_MAX_BYTES)
    throw errors.invalidOption(
      'progress',
      `must be at most ${PROGRESS_MAX_BYTES} bytes as JSON, got ${bytes}`,
    );
  return text;
}

/** A log line as stored: a string of at most LOG_LINE_MAX_BYTES. Throws a SkyqError otherwise. */
export function checkLogLine(line: unknown): string {
  if (typeof line !== 'string') throw errors.invalidOption('line', 'must be a string', line);
  const bytes = Buffer.byteLength(line);
  if (bytes > LOG_LINE_MAX_BYTES)
    throw errors.invalidOption(
      'line',
      `must be at most ${LOG_LINE_MAX_BYTES} bytes (UTF-8), got ${bytes}`,
    );
  return line;
}

/**
 * report.lua's ARGV: the events flag, the leases (by token, as claimed), then for each id named,
 * in that order, its progress, its name (with events on), how many lines it logged, and the
 * last ones.
 */
export function reportArgs(
  reports: ReadonlyMap<Message, PendingReport>,
  events: boolean,
): (string | Buffer)[] {
  const byToken = new Map<string, Message[]>();
  for (const message of reports.keys()) {
    const list = byToken.get(message.token);
    if (list) list.push(message);
    else byToken.set(message.token, [message]);
  }
  const leases: (string | Buffer)[] = [];
  const blocks: (string | Buffer)[] = [];
  for (const [token, list] of byToken) {
    leases.push(token, String(list.length));
    for (const message of list) {
      leases.push(keyOf(message));
      const report = reports.get(message) as PendingReport;
      const lines = report.lines.slice(-LOG_LINES_KEPT);
      blocks.push(
        report.progress ?? '',
        events ? (message.name ?? '') : '',
        String(report.logged),
        String(lines.length),
        ...lines,
      );
    }
  }
  return [events ? '1' : '', String(leases.length), ...leases, ...blocks];
}

/** report.lua's reply: { reported, refused ids... }. */
export function reportOutcome(reply: unknown): ReportOutcome {
  const [reported, ...refused] = reply as [number, ...string[]];
  return { reported: Number(reported), refused: refused.map(String) };
}

/** A job's reports as get() shows them (inspect.lua's last two elements). */
export interface JobReports {
  /** the last progress it reported, when it reported one */
  progress?: unknown;
  /** its last log lines, oldest first (at most 100), when it logged any */
  logs?: string[];
  /** how many lines it logged in all, the ones no longer kept included */
  logCount?: number;
}

/** Reads inspect.lua's "<lines logged>|<progress JSON>" and the kept lines. */
export function jobReports(report: unknown, lines: unknown): JobReports {
  if (report === null || report === undefined || report === false) return {};
  const text = String(report);
  const bar = text.indexOf('|');
  const out: JobReports = {};
  const json = text.slice(bar + 1);
  if (json !== '') {
    try {
      out.progress = JSON.parse(json);
    } catch {
      out.progress = json; // written by no skyq: shown as it is
    }
  }
  const count = Number(text.slice(0, bar));
  if (count > 0) {
    out.logCount = count;
    out.logs = Array.isArray(lines) ? lines.map(String) : [];
  }
  return out;
}

/** The Queue a report goes through: its settings, and run() (looked up at each call). */
export interface Reporter {
  readonly config: Pick<QueueConfig, 'groups' | 'events'>;
  run(name: 'report', group: number, args: (string | Buffer)[]): Promise<unknown>;
}

/** queue.progress(): one job's progress, one call; false when the lease is lost. */
export const reportProgress = (queue: Reporter, message: Message, value: unknown) =>
  reportOne(queue, message, { progress: progressText(value), logged: 0, lines: [] });

/** queue.log(): one line of one job's log, one call; false when the lease is lost. */
export const reportLine = (queue: Reporter, message: Message, line: string) =>
  reportOne(queue, message, { progress: null, logged: 1, lines: [checkLogLine(line)] });

async function reportOne(
  queue: Reporter,
  message: Message,
  report: PendingReport,
): Promise<boolean> {
  const { groups, events } = queue.config;
  // An id or anything else in place of the message: say that, not that its group is wrong.
  if (typeof message !== 'object' || message === null || Buffer.isBuffer(message))
    throw errors.invalidOption('message', 'must be a message claimed from this queue', message);
  const group = checkGroup('message.group', message.group, groups);
  if (typeof message.token !== 'string')
    throw errors.invalidOption('message', 'must be a message claimed from this queue');
  const reply = await queue.run('report', group, reportArgs(new Map([[message, report]]), events));
  return reportOutcome(reply).reported === 1;
}

/** queue.sendReports(): the reports of jobs of one group, checked already, in one call. */
export async function sendReports(
  queue: Reporter,
  group: number,
  reports: ReadonlyMap<Message, PendingReport>,
): Promise<ReportOutcome> {
  const args = reportArgs(reports, queue.config.events);
  return reportOutcome(await queue.run('report', group, args));
}
