// The one place the benchmarks read launcher.stats(), so only this function follows its shape.
import type { Launcher } from '../src/index.js';

/** The actors' own lateness p99 in ms (their clock, their idea of due), NaN when unknown. */
export async function actorLatenessP99(launcher: Launcher): Promise<number> {
  const { lateness } = (await launcher.stats()).totals.summary;
  return lateness.count > 0 ? lateness.p99 : Number.NaN;
}
