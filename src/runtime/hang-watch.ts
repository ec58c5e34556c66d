// Hang detection by heartbeat: each actor writes a beat into its stat block from a timer on its
// own event loop (actor-rounds.ts), and one timer of the launcher reads every actor's last beat.
// A thread stuck in a handler that never yields writes none. This replaced a ping per actor:
// ten timers of the launcher's thread firing apart, and a message each way for each, woke the
// launcher four times a second and every actor once more per round while nothing happened.
import { monotonicMs, type StatBlock } from './stat-block.js';
import { every } from './timers.js';

/** How often an actor beats and the launcher looks, for a hang limit of `hangTimeoutMs`. */
export function beatEveryMs(hangTimeoutMs: number): number {
  return Math.max(100, Math.min(5000, Math.floor(hangTimeoutMs / 4)));
}

interface Round {
  timer: NodeJS.Timeout;
  checks: Set<() => void>;
}

/** One timer per period for every watched actor of the process: they wake the thread together. */
const rounds = new Map<number, Round>();

/**
 * Calls `hung` once when the actor whose block is `stats` has not beaten for `limitMs`,
 * counted from now at the earliest (a restarted actor's block still holds its predecessor's
 * last beat). Returns what stops the watch.
 */
export function watchForHang(stats: StatBlock, limitMs: number, hung: () => void): () => void {
  const from = monotonicMs();
  const period = beatEveryMs(limitMs);
  let round = rounds.get(period);
  if (!round) {
    const checks = new Set<() => void>();
    const timer = every(() => {
      for (const check of checks) check();
    }, period);
    timer.unref();
    round = { timer, checks };
    rounds.set(period, round);
  }
  const { checks } = round;
  const stop = () => {
    checks.delete(check);
    if (checks.size === 0 && rounds.get(period)?.checks === checks) {
      clearInterval(rounds.get(period)?.timer);
      rounds.delete(period);
    }
  };
  const check = () => {
    if (monotonicMs() - Math.max(from, stats.aliveAt) <= limitMs) return;
    stop();
    hung();
  };
  checks.add(check);
  return stop;
}
