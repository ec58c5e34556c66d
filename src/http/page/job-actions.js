// The actions the job view offers, by the job's state: a delayed job runs now, is rescheduled
// or cancelled; a ready one is rescheduled or cancelled; a dead one is retried or purged; a
// waiting flow parent is cancelled with its pending children.
// A running or finished job has none. Buttons carry class `act`: disabled while Redis does
// not answer (dom.js guardActions).
import { el, toast } from './dom.js';

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "30s", "5m", "1.5h", "250ms" → ms; null when it is none of those. */
export function parseDelay(text) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(text);
  return match ? Math.round(Number(match[1]) * UNITS[match[2]]) : null;
}

const button = (id, label, onclick, danger = false) =>
  el('button', { type: 'button', id, class: danger ? 'act danger' : 'act', onclick }, label);

/** act(what): 'run-now' | 'cancel' | 'retry' | 'purge'; reschedule({ delayMs } | { runAt }). */
export function jobActions(job, { act, reschedule }) {
  const bar = (...children) =>
    el(
      'div',
      { class: 'job-part job-actions' },
      el('h3', {}, 'Actions'),
      el('div', { class: 'actions' }, children),
    );
  if (job.state === 'dead') {
    return bar(
      button('job-retry', 'Retry', () => act('retry')),
      button('job-purge', 'Purge', () => act('purge'), true),
    );
  }
  if (job.state === 'waiting') {
    // A flow parent: it goes with its pending children; it has no due time to move yet.
    return bar(
      button('job-cancel', 'Cancel job and its pending children', () => act('cancel'), true),
    );
  }
  if (job.state !== 'delayed' && job.state !== 'ready') {
    const why =
      job.state === 'active'
        ? 'It is running: it can be neither cancelled nor rescheduled.'
        : 'It has finished.';
    return el('p', { class: 'hint job-actions' }, why);
  }
  const delay = el('input', { id: 'job-delay', placeholder: 'e.g. 30s, 5m, 1h', size: 12 });
  const at = el('input', { id: 'job-at', type: 'datetime-local' });
  const later = () => {
    const delayMs = parseDelay(delay.value);
    if (delayMs === null)
      return toast('write the delay with its unit: 500ms, 30s, 5m or 1h', 'error');
    void reschedule({ delayMs });
  };
  const atTime = () => {
    const runAt = new Date(at.value).getTime();
    if (!at.value || Number.isNaN(runAt))
      return toast('choose a date and time (your local time)', 'error');
    void reschedule({ runAt });
  };
  return bar(
    job.state === 'delayed' ? button('job-run-now', 'Run now', () => act('run-now')) : null,
    el('label', {}, 'run in ', delay),
    button('job-run-in', 'Reschedule', later),
    el('label', {}, 'or at ', at),
    button('job-run-at', 'Reschedule', atTime),
    button('job-cancel', 'Cancel job', () => act('cancel'), true),
  );
}
