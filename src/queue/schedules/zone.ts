// Wall-clock times of an IANA zone and the instants they name. A wall time ("local ms": the
// epoch ms of the same calendar fields read as UTC) names one instant, two (a fall-back day
// repeats an hour) or none (a spring-forward day skips one). Offsets come from Intl, so they are
// the zone rules Node ships; DST changes are months apart, which the search below relies on.

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(tz: string): Intl.DateTimeFormat {
  let format = formatters.get(tz);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, format);
  }
  return format;
}

/** The zone's offset from UTC at `instant`, in ms (whole seconds). */
export function offsetAt(tz: string, instant: number): number {
  if (tz === 'UTC') return 0; // the default zone: no need to ask
  const seconds = Math.floor(instant / 1000) * 1000;
  const fields: Record<string, number> = {};
  for (const part of formatterOf(tz).formatToParts(seconds)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = fields;
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  return local - seconds;
}

/** The wall time at `instant`, as local ms. */
export const localOf = (tz: string, instant: number): number => instant + offsetAt(tz, instant);

/**
 * The first instant after `from` whose offset differs from the offset at `from`, when it comes
 * by `to` (else `to`): a binary search on whole seconds, as zone changes fall on them.
 */
function changeAfter(tz: string, from: number, to: number): number {
  const offset = offsetAt(tz, from);
  let low = Math.floor(from / 1000);
  let high = Math.ceil(to / 1000);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(tz, middle * 1000) === offset) low = middle;
    else high = middle;
  }
  return Math.max(high * 1000, from + 1);
}

/**
 * The instant wall time `local` names in `tz`: the earlier one when the wall time comes twice
 * (a fall-back day), and the first instant after the jump when it does not exist (a
 * spring-forward day skips it).
 */
export function instantOf(tz: string, local: number): number {
  const before = offsetAt(tz, local - DAY_MS);
  const after = offsetAt(tz, local + DAY_MS);
  const offsets = [...new Set([before, after, offsetAt(tz, local)])].sort((a, b) => b - a);
  for (const offset of offsets) {
    const instant = local - offset; // the largest offset gives the earliest instant
    if (localOf(tz, instant) === local) return instant;
  }
  // In the gap: the clock jumped from before `local` to after it between these two instants.
  if (after > before) return changeAfter(tz, local - after, local - before);
  return local - before; // no DST-like change around: zone rules stranger than any today
}

/**
 * Where the wall times that may come after `from` start: `from`'s own wall time, or, when `from`
 * lies in the second pass of a repeated hour, the end of that hour (its wall times all ran in
 * the first pass), as the last local ms before it.
 */
export function wallCursor(tz: string, from: number): number {
  const local = localOf(tz, from);
  const first = instantOf(tz, local);
  if (first >= from) return local;
  const change = changeAfter(tz, first, from); // the fall-back: the second pass starts here
  return localOf(tz, change - 1);
}
