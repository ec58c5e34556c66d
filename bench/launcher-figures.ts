// The one place the benchmarks read launcher.stats(): its shape is moving (figures read from
// shared memory, src/runtime/launcher-stats.ts), so only this function needs to follow it.
import type { Launcher } from '../src/index.js';

interface LatenessFigures {
  p99?: number;
}

/** The actors' own lateness p99 in ms (their clock, their idea of due), NaN when unknown. */
export async function actorLatenessP99(launcher: Launcher): Promise<number> {
  const totals = (await launcher.stats(5_000)).totals as {
    lateness?: LatenessFigures;
    summary?: { lateness?: LatenessFigures };
  };
  return (totals.summary?.lateness ?? totals.lateness)?.p99 ?? Number.NaN;
}
