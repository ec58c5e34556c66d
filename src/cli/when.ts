// A point in time for people: "2030-01-31T09:00:00.000Z (in 4.9 s)".

/** How far `at` is from `now`: "in 4.9 s", "3 min ago", "now". */
export function relativeTime(at: number, now: number): string {
  const ms = at - now;
  const size = Math.abs(ms);
  if (size < 50) return 'now';
  const text =
    size < 60_000
      ? `${(size / 1000).toFixed(1)} s`
      : size < 3_600_000
        ? `${(size / 60_000).toFixed(1)} min`
        : size < 172_800_000
          ? `${(size / 3_600_000).toFixed(1)} h`
          : `${(size / 86_400_000).toFixed(1)} days`;
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

export function whenText(at: number, now: number): string {
  return `${new Date(at).toISOString()} (${relativeTime(at, now)})`;
}
