// Durations as people read them, with a unit and one precision per unit, so figures side by
// side line up: 0.85 → "850 µs", 20 → "20.0 ms", 3422.572 → "3.4 s".
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  const sign = ms < 0 ? '-' : '';
  const size = Math.abs(ms);
  if (size < 1) return `${sign}${Math.round(size * 1000)} µs`;
  if (size < 999.95) return `${sign}${size.toFixed(1)} ms`;
  if (size < 59_950) return `${sign}${(size / 1000).toFixed(1)} s`;
  if (size < 3_597_000) return `${sign}${(size / 60_000).toFixed(1)} min`;
  return `${sign}${(size / 3_600_000).toFixed(1)} h`;
}

/** "20 ms / 20 ms / 20 ms": several figures of one kind (p50 / p99 / max). */
export const formatMsList = (...figures: (number | null | undefined)[]): string =>
  figures.map(formatMs).join(' / ');

/** Done per second: whole numbers from 10 up, one decimal below. */
export function formatRate(perSecond: number | undefined): string {
  if (perSecond === undefined || !Number.isFinite(perSecond)) return '-';
  return perSecond >= 10 ? String(Math.round(perSecond)) : String(Math.round(perSecond * 10) / 10);
}
