// Schedules as people read them: intervals as durations ("every 5 s", "every 1 h 30 min"),
// times on a named zone's wall clock ("2027-03-28 03:00 Europe/Berlin"), and how far off they
// are ("in 1 h 12 min"). A cron schedule's times are shown in its own zone, an `every` one's in
// this machine's.
import type { ScheduleState } from '../queue/schedules/schedules.js';
import { printable } from './preview.js';

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/** 5000 → "5 s", 5_400_000 → "1 h 30 min": every unit that is not zero, largest first. */
export function durationText(ms: number, units = UNITS.length): string {
  const parts: string[] = [];
  let rest = Math.round(Math.abs(ms));
  for (const [name, size] of UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 && parts.length < units) parts.push(`${count} ${name}`);
  }
  return parts.length === 0 ? '0 ms' : parts.join(' ');
}

/** "in 1 h 12 min", "3 min 5 s ago", "now": the two largest units. */
export function untilText(at: number, now: number): string {
  const ms = at - now;
  if (Math.abs(ms) < 1000) return 'now';
  const text = durationText(Math.floor(Math.abs(ms) / 1000) * 1000, 2);
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

/** This machine's zone (TZ, else the system's). */
export const localZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** "2027-03-28 03:00 Europe/Berlin" (seconds shown when not 0). */
export function zonedText(at: number, tz: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  );
  const seconds = parts.second === '00' ? '' : `:${parts.second}`;
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}${seconds} ${tz}`;
}

/** The zone a schedule's times are shown in. */
export const zoneOf = (schedule: Pick<ScheduleState, 'cron' | 'tz'>): string =>
  schedule.cron !== undefined ? schedule.tz : localZone();

/** "every 5 s" or `cron "0 3 * * *" Europe/Berlin`. */
export const timingText = (schedule: Pick<ScheduleState, 'every' | 'cron' | 'tz'>): string =>
  schedule.every !== undefined
    ? `every ${durationText(schedule.every)}`
    : `cron "${printable(schedule.cron as string)}" ${schedule.tz}`;

/** A run time with its zone and how far off it is. */
export const runText = (at: number, tz: string, now: number): string =>
  `${zonedText(at, tz)} (${untilText(at, now)})`;
