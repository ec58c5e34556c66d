// The schedules table: next due, last run, occurrences so far, and a Remove button each.
// Read from Redis (GET /api/schedules), so it is refreshed every few polls, not every one.
import { get, post } from './api.js';
import { confirmAction, el, formatCount } from './dom.js';

const time = (ms) => (ms === undefined || ms === null ? '–' : new Date(ms).toLocaleString());

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
    const { schedules } = await get('/api/schedules');
    tbody.replaceChildren(
      ...schedules.map((s) =>
        el(
          'tr',
          { dataset: { schedule: s.id, next: s.next ?? '' }, tabindex: 0 },
          el('td', {}, s.id),
          el('td', {}, s.every !== undefined ? `every ${s.every} ms` : `${s.cron} (${s.tz})`),
          el('td', {}, s.name ?? '–'),
          el('td', {}, time(s.next)),
          el('td', {}, time(s.last)),
          el('td', { class: 'num' }, formatCount(s.count)),
          el(
            'td',
            {},
            el(
              'button',
              { type: 'button', class: 'danger', onclick: () => void remove(s.id) },
              'Remove',
            ),
          ),
        ),
      ),
    );
  }
  return { load };
}
