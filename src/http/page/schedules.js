// The schedules table: when each runs (its next three times, on the wall clock of a named zone,
// and how far off), last run, occurrences so far, its body, and a Remove button each. Read from
// Redis (GET /api/schedules), so it is refreshed every few polls, not every one.
import { get, post } from './api.js';
import { confirmAction, el, formatCount } from './dom.js';

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/** 5000 → "5 s", 5_400_000 → "1 h 30 min" (at most `units` units, largest first). */
export function durationText(ms, units = UNITS.length) {
  const parts = [];
  let rest = Math.round(Math.abs(ms));
  for (const [name, size] of UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 && parts.length < units) parts.push(`${count} ${name}`);
  }
  return parts.length === 0 ? '0 ms' : parts.join(' ');
}

/** "in 1 h 12 min", "5 min 3 s ago", "now". */
export function untilText(at, now) {
  const ms = at - now;
  if (Math.abs(ms) < 1000) return 'now';
  const text = durationText(Math.floor(Math.abs(ms) / 1000) * 1000, 2);
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

/** "2027-03-28 03:00 Europe/Berlin" (seconds when not 0). */
export function zonedText(at, zone) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
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
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}${seconds} ${zone}`;
}

// A cron schedule's times in its own zone, an `every` one's in the browser's.
const zoneOf = (s) =>
  s.cron !== undefined ? s.tz : Intl.DateTimeFormat().resolvedOptions().timeZone;
const when = (s) =>
  s.every !== undefined ? `every ${durationText(s.every)}` : `${s.cron} (${s.tz})`;

export function schedulesTable(tbody, onError) {
  async function remove(id) {
    if (!(await confirmAction(`Remove schedule ${id}? Its waiting occurrence goes too.`))) return;
    try {
      await post(`/api/schedules/${encodeURIComponent(id)}/remove`);
    } catch (error) {
      onError(error);
    }
    await load();
  }
  async function load() {
    const { now, schedules } = await get('/api/schedules');
    tbody.replaceChildren(
      ...schedules.map((s) => {
        const zone = zoneOf(s);
        const time = (at) => `${zonedText(at, zone)} (${untilText(at, now)})`;
        const runs = s.upcoming.length === 0 ? ['–'] : s.upcoming.map(time);
        return el(
          'tr',
          { dataset: { schedule: s.id, next: s.next ?? '' }, tabindex: 0 },
          el('td', {}, s.id),
          el('td', { dataset: { cell: 'when' } }, when(s)),
          el('td', {}, s.name ?? '–'),
          el('td', { dataset: { cell: 'next' } }, ...runs.map((run) => el('div', {}, run))),
          el('td', {}, s.last === undefined ? '–' : time(s.last)),
          el('td', { class: 'num' }, formatCount(s.count)),
          el('td', { dataset: { cell: 'body' } }, `${s.body.text}${s.body.truncated ? '…' : ''}`),
          el(
            'td',
            {},
            el(
              'button',
              { type: 'button', class: 'danger', onclick: () => void remove(s.id) },
              'Remove',
            ),
          ),
        );
      }),
    );
  }
  return { load };
}
