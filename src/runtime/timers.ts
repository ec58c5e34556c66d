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
 * A timer can fire this much before its time on `performance.now()`: libuv checks timeouts
 * against its loop clock, whole ms read at the top of the loop turn.
 */
const EARLY_MS = 5;

/**
 * How long until the next multiple of `periodMs` on this thread's clock. Timers of one thread
 * that keep to the same grid fire together: one wake-up of the thread instead of one each.
 * A tick that fired just before its grid point goes on to the next one: asked again 0.4 ms
 * early, it ran twice, 1 ms apart (a coordinator published twice a second).
 */
export function untilNext(periodMs: number): number {
  const rest = periodMs - (performance.now() % periodMs);
  return rest <= Math.min(EARLY_MS, periodMs / 2) ? rest + periodMs : rest;
}
