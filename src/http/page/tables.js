// The groups and actors tables. Rows are kept and updated in place (keyed by group, or by
// launcher and group), so a button under the pointer is not replaced every second.
import { sparkline } from './charts.js';
import { el, formatCount, formatMs, setEnabled } from './dom.js';

/** Makes tbody hold one row per item, in order, creating and removing rows as needed. */
function syncRows(tbody, items, keyOf, create, update) {
  const existing = new Map([...tbody.rows].map((row) => [row.dataset.key, row]));
  const wanted = items.map((item) => {
    const key = String(keyOf(item));
    let row = existing.get(key);
    existing.delete(key);
    if (!row) {
      row = create(item);
      row.dataset.key = key;
    }
    update(row, item);
    return row;
  });
  for (const row of existing.values()) row.remove();
  wanted.forEach((row, i) => {
    if (tbody.rows[i] !== row) tbody.insertBefore(row, tbody.rows[i] ?? null);
  });
}

function setCell(row, name, text) {
  const cell = row.querySelector(`[data-cell="${name}"]`);
  if (cell.textContent !== String(text)) cell.textContent = String(text);
}

const cell = (name, className = 'num') => el('td', { class: className, 'data-cell': name });

/**
 * samples: the server's samples; onToggle(group, pause) pauses or resumes a group. `known`:
 * false while Redis does not answer: no depth or state is shown as if it were read.
 */
export function renderGroups(tbody, prefix, depths, samples, onToggle, known = true) {
  syncRows(
    tbody,
    depths,
    (d) => d.group,
    (d) =>
      el(
        'tr',
        { dataset: { group: d.group } },
        el('td', { 'data-cell': 'name' }),
        ['delayed', 'ready', 'active', 'dead'].map((name) => cell(name)),
        el('td', { class: 'spark-cell', 'data-cell': 'spark' }),
        cell('state', 'state'),
        el(
          'td',
          {},
          el('button', {
            type: 'button',
            class: 'toggle act',
            onclick: (event) => onToggle(d.group, event.currentTarget.dataset.action === 'pause'),
          }),
        ),
      ),
    (row, d) => {
      setCell(row, 'name', `${prefix}:${d.group}`);
      const read = known && !d.error;
      for (const name of ['delayed', 'ready', 'active', 'dead']) {
        setCell(row, name, read ? formatCount(d[name]) : '–');
      }
      const state = !known
        ? 'unknown: Redis does not answer'
        : d.error
          ? `unreadable: ${d.error}`
          : d.paused
            ? 'paused'
            : 'running';
      setCell(row, 'state', state);
      row.classList.toggle('paused', read && d.paused);
      row.classList.toggle('unknown', !read);
      const button = row.querySelector('button.toggle');
      const paused = read && d.paused;
      button.dataset.action = paused ? 'resume' : 'pause';
      const label = paused ? 'Resume' : 'Pause';
      if (button.textContent !== label) button.textContent = label;
      button.setAttribute('aria-label', `${label} group ${d.group}`);
      setEnabled(button, read);
      const pending = samples.map((s) => {
        const depth = s.depths[d.group];
        return depth ? depth[0] + depth[1] + depth[2] : null;
      });
      row
        .querySelector('[data-cell="spark"]')
        .replaceChildren(
          sparkline(pending, { title: `pending in group ${d.group} over the last minutes` }),
        );
    },
  );
}

export function renderActors(tbody, actors) {
  syncRows(
    tbody,
    actors,
    (a) => `${a.launcher}/${a.group}`,
    (a) =>
      el(
        'tr',
        { dataset: { group: a.group, launcher: a.launcher } },
        el('td', { class: 'launcher', 'data-cell': 'launcher' }),
        cell('group'),
        cell('state', 'state'),
        ['rate', 'inFlight', 'done', 'failed', 'dead', 'p50', 'p99', 'restarts'].map((n) =>
          cell(n),
        ),
        el('td', { class: 'error', 'data-cell': 'error' }),
      ),
    (row, a) => {
      setCell(row, 'launcher', a.launcher);
      setCell(row, 'group', a.group);
      const state = a.status === 'ok' ? (a.state ?? '?') : a.status;
      setCell(row, 'state', state);
      row.dataset.state = state;
      setCell(row, 'rate', a.ratePerSecond === null ? '–' : formatCount(a.ratePerSecond));
      setCell(row, 'inFlight', formatCount(a.inFlight));
      setCell(row, 'done', formatCount(a.done));
      setCell(row, 'failed', formatCount(a.failed));
      setCell(row, 'dead', formatCount(a.dead));
      setCell(row, 'p50', formatMs(a.lateness?.p50));
      setCell(row, 'p99', formatMs(a.lateness?.p99));
      setCell(row, 'restarts', formatCount(a.restarts));
      setCell(row, 'error', a.lastError ?? '');
    },
  );
}

/** Per job name: done, failed and the handler's p99. */
export function renderNames(tbody, names) {
  syncRows(
    tbody,
    names,
    (n) => n.name,
    () =>
      el(
        'tr',
        {},
        el('td', { 'data-cell': 'name' }),
        ['done', 'failed', 'p99'].map((n) => cell(n)),
      ),
    (row, n) => {
      setCell(row, 'name', n.name);
      setCell(row, 'done', formatCount(n.done));
      setCell(row, 'failed', formatCount(n.failed));
      setCell(row, 'p99', formatMs(n.p99));
    },
  );
}

/** Per intake list (or sorted set) of every launcher: its length, items moved and their rate. */
export function renderIntake(section, lists) {
  section.hidden = lists.length === 0;
  syncRows(
    section.querySelector('tbody'),
    lists,
    (l) => `${l.launcher}\n${l.list}`,
    () =>
      el(
        'tr',
        {},
        el('td', { 'data-cell': 'list' }),
        el('td', { 'data-cell': 'launcher' }),
        ['group', 'priority', 'length', 'items', 'rate'].map((n) => cell(n)),
        el('td', { 'data-cell': 'error' }),
      ),
    (row, l) => {
      setCell(row, 'list', l.scoreUnit ? `${l.list} (sorted set, ${l.scoreUnit})` : l.list);
      setCell(row, 'launcher', l.launcher);
      setCell(row, 'group', String(l.group));
      setCell(row, 'priority', String(l.priority));
      setCell(row, 'length', l.length === null ? '–' : formatCount(l.length));
      setCell(row, 'items', formatCount(l.items));
      setCell(row, 'rate', formatCount(l.rate));
      setCell(row, 'error', l.error ?? '');
    },
  );
}
