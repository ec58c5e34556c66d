// Durations as people read them, with a unit and sensible precision, the way the dashboard
// shows them (src/http/page/dom.js formatMs): 0.85 → "850 µs", 3422.572 → "3.4 s".
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  const sign = ms < 0 ? '-' : '';
  const size = Math.abs(ms);
  if (size < 1) return `${sign}${Math.round(size * 1000)} µs`;
  if (size < 1000) return `${sign}${Math.round(size * 10) / 10} ms`;
  if (size < 60_000) return `${sign}${Math.round(size / 100) / 10} s`;
  if (size < 3_600_000) return `${sign}${Math.round(size / 6000) / 10} min`;
  return `${sign}${Math.round(size / 360_000) / 10} h`;
}

/** "20 ms / 20 ms / 20 ms": several figures of one kind (p50 / p99 / max). */
export const formatMsList = (...figures: (number | null | undefined)[]): string =>
  figures.map(formatMs).join(' / ');
