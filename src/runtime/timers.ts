// Node fires a setTimeout longer than 2^31 − 1 ms after 1 ms (with a warning):
// a message due in 30 days made its actor run thousands of claims a second.
// Every runtime timer goes through here; a wait that is cut short just looks
// again and finds nothing due yet.
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function later(run: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(run, Math.min(Math.max(0, ms), MAX_TIMER_MS));
}

export function every(run: () => void, ms: number): NodeJS.Timeout {
  return setInterval(run, Math.min(Math.max(1, ms), MAX_TIMER_MS));
}

/**
 * How long until the next multiple of `periodMs` on this thread's clock. Timers of one thread
 * that keep to the same grid fire together: one wake-up of the thread instead of one each.
 */
export function untilNext(periodMs: number): number {
  return periodMs - (performance.now() % periodMs);
}
