// The job view's progress and log lines (a handler's ctx.progress and ctx.log): a bar for a
// percentage, any other value as JSON, then the job's last lines. While the job runs, job.js
// reads it again each second and puts a fresh section in this one's place. Text only (dom.js).
import { el, formatCount } from './dom.js';

/** The section, or null for a job that is not running and never reported. */
export function reports(job) {
  const running = job.state === 'active';
  if (job.progress === undefined && job.logCount === undefined && !running) return null;
  return el(
    'div',
    { class: 'job-part job-reports', 'data-part': 'reports' },
    el('h3', {}, 'Progress and log'),
    progressOf(job),
    linesOf(job),
  );
}

function progressOf(job) {
  const progress = job.progress;
  if (progress === undefined)
    return el('p', { class: 'hint', 'data-field': 'progress' }, 'no progress reported');
  if (typeof progress === 'number') {
    return el(
      'p',
      { class: 'progress-line' },
      el('progress', { max: 100, value: progress, 'aria-label': 'progress' }),
      ' ',
      el('span', { 'data-field': 'progress' }, `${progress} %`),
    );
  }
  return el(
    'pre',
    { class: 'job-body', tabindex: 0, 'data-field': 'progress', 'aria-label': 'progress' },
    JSON.stringify(progress, null, 2),
  );
}

function linesOf(job) {
  const lines = job.logs ?? [];
  if (!job.logCount) return el('p', { class: 'hint', 'data-field': 'log count' }, 'no log lines');
  const count =
    lines.length < job.logCount
      ? `the last ${formatCount(lines.length)} of ${formatCount(job.logCount)} lines`
      : `${formatCount(lines.length)} line${lines.length === 1 ? '' : 's'}`;
  return [
    el('p', { class: 'hint', 'data-field': 'log count' }, count),
    el(
      'pre',
      { class: 'job-log', tabindex: 0, 'data-field': 'logs', 'aria-label': 'log lines' },
      lines.join('\n'),
    ),
  ];
}

/** Puts `fresh` in the place of `old`, keeping the log's scroll (at its end, it follows) and focus. */
export function replaceReports(old, fresh) {
  const log = old.querySelector('.job-log');
  const atEnd = !log || log.scrollTop + log.clientHeight >= log.scrollHeight - 2;
  const top = log?.scrollTop ?? 0;
  const focused = old.contains(document.activeElement)
    ? document.activeElement.getAttribute('data-field')
    : null;
  old.replaceWith(fresh);
  followLog(fresh, atEnd ? null : top);
  if (focused) fresh.querySelector(`[data-field="${focused}"]`)?.focus({ preventScroll: true });
}

/** Scrolls the log to `top`, or to its end (the latest lines) when null. */
export function followLog(part, top = null) {
  const log = part?.querySelector('.job-log');
  if (log) log.scrollTop = top ?? log.scrollHeight;
}
