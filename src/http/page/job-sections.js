// The parts of the job view (job.js), each built from the job as GET /api/jobs/<id> gives it:
// its facts, its times with the spans between them, its errors with the stack, its body and
// its result. Every value goes in as text (dom.js el).
import { el, formatCount, formatMs, formatTime, toast } from './dom.js';

const KINDS = { text: 'text', json: 'JSON', bytes: 'bytes, in hex' };

const fact = (name, value) => [el('dt', {}, name), el('dd', { 'data-field': name }, value)];

export function facts(job) {
  return el(
    'dl',
    { class: 'facts' },
    fact('id', job.id),
    fact('name', job.name ?? '–'),
    fact('group', job.group),
    fact('state', job.state),
    fact('priority', job.priority),
    fact('attempts', `${job.attempts} of ${job.maxAttempts}`),
    job.schedule ? fact('schedule', scheduleLink(job.schedule)) : null,
    job.dedupeUntil ? fact('dedupe until', formatTime(job.dedupeUntil)) : null,
  );
}

/** A schedule's occurrence names its schedule: the link shows its row in Schedules. */
function scheduleLink(schedule) {
  const show = (event) => {
    event.preventDefault();
    const row = document.querySelector(`#schedules tr[data-schedule="${CSS.escape(schedule.id)}"]`);
    if (!row) return toast(`schedule ${schedule.id} is not listed (removed?)`, 'error');
    document.getElementById('job-dialog').close();
    row.classList.add('highlight');
    setTimeout(() => row.classList.remove('highlight'), 3000);
    row.tabIndex = -1;
    row.scrollIntoView({ block: 'center' });
    row.focus({ preventScroll: true });
  };
  const at = formatTime(schedule.at);
  return [
    el('a', { href: '#schedules', class: 'schedule-link', onclick: show }, schedule.id),
    ` (its occurrence of ${at})`,
  ];
}

/** Added, due, started, lease end, finished, died: each with the span since the one before. */
export function timeline(job) {
  const rows = [
    ['added', job.enqueuedAt],
    ['due', job.dueAt],
    ['started', job.startedAt],
    ['lease ends', job.leaseUntil],
    ['finished', job.finishedAt],
    ['died', job.diedAt],
  ];
  const items = [];
  let before = null;
  for (const [what, at] of rows) {
    const known = at !== null && at !== undefined && at < 9e15;
    // Started is not kept for a job that is running or has died: say so, never guess.
    const unknownStart = what === 'started' && !known && ['active', 'dead'].includes(job.state);
    if (!known && !unknownStart && !(what === 'added' && at === null)) continue;
    if (!known) {
      const by = job.schedule ? `schedule ${job.schedule.id}` : 'another program';
      const why = what === 'added' ? `added by ${by}` : 'not kept';
      items.push(
        el(
          'li',
          { dataset: { at: what } },
          el('span', { class: 'when' }, `${what}: –`),
          ` (${why})`,
        ),
      );
      continue;
    }
    const span = before === null ? '' : spanText(at - before[1], before[0]);
    items.push(
      el(
        'li',
        { dataset: { at: what } },
        el('span', { class: 'when' }, `${what}: ${formatTime(at)}`),
        span,
      ),
    );
    before = [what, at];
  }
  if (job.durationMs !== undefined)
    items.push(el('li', { dataset: { at: 'ran' } }, `ran for ${formatMs(job.durationMs)}`));
  if (job.dueAt && job.dueAt < 9e15 && ['delayed', 'ready'].includes(job.state)) {
    const ms = job.dueAt - job.now;
    items.push(
      el(
        'li',
        { dataset: { at: 'now' } },
        ms > 0 ? `due in ${formatMs(ms)}` : `due ${formatMs(-ms)} ago`,
      ),
    );
  }
  return el(
    'div',
    { class: 'job-part' },
    el('h3', {}, 'Times'),
    el('ol', { class: 'timeline', 'data-field': 'timeline' }, items),
  );
}

const spanText = (ms, since) =>
  ` (${ms >= 0 ? `${formatMs(ms)} after ${since}` : `${formatMs(-ms)} before ${since}`})`;

/** The last error with its stack, the dead reason, a result that could not be kept. */
export function errorsOf(job) {
  if (!job.lastError && !job.deadReason) return null;
  return el(
    'div',
    { class: 'job-part job-errors' },
    el('h3', {}, 'Errors'),
    job.deadReason
      ? el('p', {}, 'dead: ', el('span', { 'data-field': 'dead reason' }, job.deadReason))
      : null,
    job.lastError
      ? el(
          'p',
          {},
          'last error: ',
          el('span', { class: 'error', 'data-field': 'last error' }, job.lastError),
        )
      : null,
    job.lastErrorStack
      ? el(
          'pre',
          {
            class: 'stack',
            tabindex: 0,
            'data-field': 'stack',
            'aria-label': 'stack of the last error',
          },
          job.lastErrorStack,
        )
      : null,
    job.attempts > 1
      ? el(
          'p',
          { class: 'hint' },
          'Only the last error is kept; each failure is in the actor’s log (skyq logs --job ID).',
        )
      : null,
  );
}

function shown(value, field, label) {
  const note = `${KINDS[value.kind]}${value.truncated ? `, the first ${formatCount(value.text.length)} of ${formatCount(value.length)} characters` : ''}`;
  return [
    el('p', { class: 'hint' }, note),
    el(
      'pre',
      { class: 'job-body', tabindex: 0, 'data-field': field, 'aria-label': label },
      value.truncated ? `${value.text}…` : value.text,
    ),
  ];
}

export function body(job) {
  const content =
    job.body === null
      ? el('p', { class: 'hint' }, 'not kept (over 64 KiB, done)')
      : shown(job.body, 'body', 'body');
  return el('div', { class: 'job-part' }, el('h3', {}, 'Body'), content);
}

export function result(job) {
  if (job.state !== 'done') return null;
  const content =
    job.result !== null
      ? shown(job.result, 'result', 'result')
      : el(
          'p',
          { 'data-field': 'result' },
          job.resultKept === 'truncated'
            ? `not kept: ${formatCount(job.resultBytes)} bytes, over the limit`
            : '– (nothing returned)',
        );
  return el('div', { class: 'job-part' }, el('h3', {}, 'Result'), content);
}
