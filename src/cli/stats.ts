// skyq stats: depth of every group, and the live figures every running
// launcher publishes (per actor: counters, lateness, state, restarts).
// --watch refreshes: in place in a terminal, one table per interval otherwise.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import type { Queue } from '../queue/queue.js';
import { explainRedisError } from '../redis/explain.js';
import { isConnectionLoss } from '../redis/failure.js';
import { readAllStats } from '../runtime/registry.js';
import { type ConnectionFlags, printJson, readFromLine, withConnectionFlags } from './common.js';
import { describeMs, parseDuration } from './duration.js';
import { renderStats, type StatsSnapshot } from './stats-view.js';
import { withReader } from './with-queue.js';

interface StatsFlags extends ConnectionFlags {
  json?: boolean;
  watch?: string | true;
}

const DEFAULT_WATCH_MS = 2000;
/** Faster refreshes only cost Redis round trips: the launchers publish every second. */
const MIN_WATCH_MS = 100;
const MAX_WATCH_MS = 3_600_000;

// Cursor home, clear to end of line / of screen, hide / show the cursor.
const HOME = '\x1b[H';
const CLEAR_LINE = '\x1b[K';
const CLEAR_BELOW = '\x1b[J';
const CLEAR_SCREEN = '\x1b[2J';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';

export function registerStats(program: Command): void {
  withConnectionFlags(program.command('stats'))
    .description('queue depths per group and the live figures of every running launcher')
    .option('--json', 'print JSON (with --watch: one JSON object per line)')
    .option(
      '--watch [interval]',
      `refresh every interval (default ${describeMs(DEFAULT_WATCH_MS)}); Ctrl-C ends`,
    )
    .action(async (flags: StatsFlags) => {
      const intervalMs =
        flags.watch === undefined
          ? null
          : flags.watch === true
            ? DEFAULT_WATCH_MS
            : watchInterval(flags.watch);
      await withReader(
        flags,
        async (queue) => {
          const from = readFromLine(flags);
          if (intervalMs === null)
            return show(await snapshot(queue), queue, flags.json === true, from);
          await watch(queue, intervalMs, flags.json === true, from);
        },
        intervalMs === null ? 'done' : 'stopped',
      );
    });
}

function watchInterval(text: string): number {
  const ms = parseDuration(text, 'watch', MAX_WATCH_MS);
  if (ms < MIN_WATCH_MS)
    throw errors.invalidOption('watch', `must be at least ${describeMs(MIN_WATCH_MS)}`, text);
  return ms;
}

async function snapshot(queue: Queue): Promise<StatsSnapshot> {
  const [groups, launchers, limits] = await Promise.all([
    queue.counts(),
    readAllStats(queue.client, queue.config.prefix),
    queue.rateLimits.list(),
  ]);
  return { groups, launchers, limits };
}

function show(snap: StatsSnapshot, queue: Queue, json: boolean, from: string): void {
  if (json) printJson(snap);
  else console.log(`${from}\n\n${renderStats(snap, queue.config.prefix)}`);
}

async function watch(queue: Queue, intervalMs: number, json: boolean, from: string): Promise<void> {
  const inPlace = process.stdout.isTTY === true && !json;
  let stopped = false;
  let wake: () => void = () => undefined;
  const stop = () => {
    stopped = true;
    wake();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // withReader checked that Redis answers, so a lost connection, even before the first frame,
  // is an outage to wait out: it shows in the frame. Any other error before the first frame (a
  // refused login, newer data) will not fix itself: one line and exit 1, as every command does.
  let answered = false;
  try {
    while (!stopped) {
      const title = `skyq stats every ${describeMs(intervalMs)} at ${new Date().toISOString()} (Ctrl-C ends), ${from}`;
      let body: string;
      try {
        const snap = await snapshot(queue);
        if (!answered && inPlace) process.stdout.write(HIDE_CURSOR + CLEAR_SCREEN);
        answered = true;
        if (json) {
          process.stdout.write(`${JSON.stringify({ at: Date.now(), ...snap })}\n`);
          body = '';
        } else body = renderStats(snap, queue.config.prefix);
      } catch (error) {
        if (!answered && !isConnectionLoss(error)) throw error;
        // An outage shows in the frame; the next refresh tries again.
        const explained = explainRedisError(error, queue.config.prefix, queue.client);
        body = `cannot read the figures: ${(explained as Error).message}`;
        if (json) process.stderr.write(`skyq: ${body}\n`);
      }
      if (inPlace) process.stdout.write(frame(`${title}\n\n${body}`));
      else if (!json) process.stdout.write(`--- ${title}\n${body}\n\n`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    if (inPlace && answered) process.stdout.write(`${SHOW_CURSOR}\n`);
  }
}

/** The text drawn over the previous one from the top-left corner, cut to the screen. */
function frame(text: string): string {
  const rows = process.stdout.rows || 24;
  const columns = process.stdout.columns || 80;
  const lines = text.split('\n').slice(0, Math.max(1, rows - 1));
  return HOME + lines.map((line) => line.slice(0, columns) + CLEAR_LINE).join('\n') + CLEAR_BELOW;
}
