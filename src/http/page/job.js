// Job lookup by id: state, times, attempts, errors and the body (as text), with cancel and
// reschedule for a job that is still waiting (delayed or ready).
import { ApiError, get, post } from './api.js';
import { confirmAction, el, formatTime, replaceChildren, toast } from './dom.js';

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "30s", "5m", "1.5h", "250ms" → ms; null when it is none of those. */
export function parseDelay(text) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(text);
  return match ? Math.round(Number(match[1]) * UNITS[match[2]]) : null;
}

export class JobView {
  #id = null;

  constructor() {
    this.view = document.getElementById('job-view');
    document.getElementById('job-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.show(document.getElementById('job-id').value.trim());
    });
  }

  async show(id) {
    this.#id = id;
    if (!id) return;
    try {
      this.#render(await get(`/api/jobs/${encodeURIComponent(id)}`));
    } catch (error) {
      replaceChildren(
        this.view,
        el('p', { class: 'missing' }, error instanceof ApiError ? error.message : String(error)),
      );
    }
  }

  #render(job) {
    const waiting = job.state === 'delayed' || job.state === 'ready';
    const fact = (name, value) => [el('dt', {}, name), el('dd', { 'data-field': name }, value)];
    const body = job.body.truncated ? `${job.body.text}…` : job.body.text;
    replaceChildren(
      this.view,
      el(
        'dl',
        {},
        fact('id', job.id),
        fact('group', job.group),
        fact('state', job.state),
        fact('due', formatTime(job.dueAt)),
        fact('enqueued', formatTime(job.enqueuedAt)),
        fact('priority', job.priority),
        fact('attempts', `${job.attempts} of ${job.maxAttempts}`),
        fact('last error', job.lastError ?? '–'),
        fact('dead reason', job.deadReason ?? '–'),
      ),
      el('pre', { class: 'job-body', 'data-field': 'body' }, body),
      waiting
        ? this.#actions()
        : el(
            'p',
            { class: 'hint' },
            'Only a delayed or ready job can be cancelled or rescheduled.',
          ),
    );
  }

  #actions() {
    const delay = el('input', { id: 'job-delay', placeholder: 'e.g. 30s, 5m, 1h', size: 12 });
    const at = el('input', { id: 'job-at', type: 'datetime-local' });
    return el(
      'p',
      { class: 'actions' },
      el(
        'button',
        { type: 'button', id: 'job-cancel', class: 'danger', onclick: () => this.#cancel() },
        'Cancel job',
      ),
      el('label', {}, ' run in ', delay),
      el(
        'button',
        {
          type: 'button',
          id: 'job-run-in',
          onclick: () => this.#reschedule({ delayText: delay.value }),
        },
        'Reschedule',
      ),
      el('label', {}, ' or at ', at),
      el(
        'button',
        { type: 'button', id: 'job-run-at', onclick: () => this.#reschedule({ at: at.value }) },
        'Reschedule',
      ),
    );
  }

  async #cancel() {
    const id = this.#id;
    if (!(await confirmAction(`Cancel job ${id}? It will not run.`))) return;
    const { cancelled } = await post(`/api/jobs/${encodeURIComponent(id)}/cancel`).catch((e) => {
      toast(e.message, 'error');
      return {};
    });
    if (cancelled) toast(`cancelled ${id}`);
    else if (cancelled === false) toast(`${id} was no longer waiting: nothing cancelled`, 'error');
    await this.show(id);
  }

  async #reschedule({ delayText, at }) {
    const id = this.#id;
    let body;
    if (delayText !== undefined) {
      const delayMs = parseDelay(delayText);
      if (delayMs === null)
        return toast('write the delay with its unit: 500ms, 30s, 5m or 1h', 'error');
      body = { delayMs };
    } else {
      const runAt = new Date(at).getTime();
      if (!at || Number.isNaN(runAt)) return toast('choose a date and time', 'error');
      body = { runAt };
    }
    try {
      const { rescheduled } = await post(`/api/jobs/${encodeURIComponent(id)}/reschedule`, body);
      toast(
        rescheduled ? `rescheduled ${id}` : `${id} was no longer waiting: not rescheduled`,
        rescheduled ? 'info' : 'error',
      );
    } catch (error) {
      toast(error.message, 'error');
    }
    await this.show(id);
  }
}
