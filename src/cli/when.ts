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

/**
 * A time read as local time, said in that zone and in UTC: "2027-01-01 09:00:00.000 local time
 * (Asia/Tokyo, UTC+09:00; 2027-01-01T00:00:00.000Z)".
 */
export function localTimeText(at: number): string {
  const date = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  const day = `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`;
  const clock = `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
  const ms = String(date.getMilliseconds()).padStart(3, '0');
  const east = -date.getTimezoneOffset();
  const offset = `UTC${east < 0 ? '-' : '+'}${two(Math.floor(Math.abs(east) / 60))}:${two(Math.abs(east) % 60)}`;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return `${day} ${clock}.${ms} local time (${zone}, ${offset}; ${date.toISOString()})`;
}
