// The job view: one dialog every list opens (the Jobs tabs, dead letters, a schedule's pending
// occurrence, lookup by id). It shows the job's facts, its times with the spans between them,
// its errors with the stack, its body and result, and the actions its state allows. Esc or the
// close button closes it, and focus goes back to what opened it. Every value goes in as text.
import { ApiError, get, post } from './api.js';
import { confirmAction, el, guardActions, replaceChildren, toast } from './dom.js';
import { jobActions } from './job-actions.js';
import { flow } from './job-flow.js';
import { followLog, replaceReports, reports } from './job-reports.js';
import { body, errorsOf, facts, result, timeline } from './job-sections.js';

/** How often the view reads a running job again (its progress and log lines). */
const REFRESH_MS = 1000;

export class JobView {
  /** { id, idBase64?, group? }: the job shown */
  #ref = null;
  #opener = null;
  /** the job shown is a flow parent waiting for its children */
  #waiting = false;
  #onChanged;
  /** reads a running job again (its progress and log lines) */
  #refresh = null;

  /** `onChanged()`: an action changed the queue (lists redraw). */
  constructor(onChanged) {
    this.#onChanged = onChanged;
    this.dialog = document.getElementById('job-dialog');
    this.view = document.getElementById('job-view');
    this.title = document.getElementById('job-title');
    document.getElementById('job-close').addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => {
      clearTimeout(this.#refresh);
      if (this.#opener?.isConnected) this.#opener.focus();
      this.#opener = null;
    });
    document.getElementById('job-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const id = document.getElementById('job-id').value.trim();
      if (id) void this.open({ id }, document.getElementById('job-id'));
    });
  }

  /** Opens the view on a job; `opener` gets the focus back when it closes. */
  async open(ref, opener = document.activeElement) {
    this.#ref = ref;
    this.#opener = opener;
    replaceChildren(this.view, el('p', { class: 'hint', role: 'status' }, 'loading…'));
    if (!this.dialog.open) this.dialog.showModal();
    this.title.focus();
    await this.#load();
  }

  /** The job's route, by its group and, for an id that is not UTF-8, its bytes. */
  #path(ref) {
    const query = new URLSearchParams();
    if (ref.group !== undefined) query.set('group', ref.group);
    if (ref.idBase64) query.set('idBase64', ref.idBase64);
    return `/api/jobs/${encodeURIComponent(ref.id)}${query.size ? `?${query}` : ''}`;
  }

  async #load() {
    clearTimeout(this.#refresh);
    const ref = this.#ref;
    if (this.title.textContent !== `Job ${ref.id}`)
      replaceChildren(this.title, 'Job ', el('code', {}, ref.id));
    let job;
    try {
      job = await get(this.#path(ref));
    } catch (error) {
      const text = error instanceof ApiError ? error.message : String(error);
      replaceChildren(this.view, el('p', { class: 'missing', role: 'status' }, text));
      return;
    }
    // Actions name the job by its group, and by its bytes when its id is not UTF-8.
    this.#ref = { ...ref, group: job.group, ...(job.idBase64 ? { idBase64: job.idBase64 } : {}) };
    this.#waiting = job.state === 'waiting';
    // Sections in order: a flow's parent and children, a running job's progress and log lines.
    const opener = this.#opener;
    const openNode = (node) => void this.open(node, opener);
    const sections = [
      facts(job),
      flow(job, openNode),
      timeline(job),
      reports(job),
      errorsOf(job),
      body(job),
      result(job),
    ];
    const actions = jobActions(job, {
      act: (what) => this.#act(what),
      reschedule: (due) => this.#reschedule(due),
    });
    replaceChildren(this.view, sections, actions);
    followLog(this.view);
    guardActions(this.view);
    this.#follow(job);
  }

  /** While the job runs, its progress and lines are read again each second. */
  #follow(job) {
    clearTimeout(this.#refresh);
    if (job.state !== 'active' || !this.dialog.open) return;
    const ref = this.#ref;
    this.#refresh = setTimeout(async () => {
      let fresh;
      try {
        fresh = await get(this.#path(ref));
      } catch {
        fresh = null; // gone, or the server is away: the next #load says so
      }
      if (ref !== this.#ref || !this.dialog.open) return;
      const part = this.view.querySelector('[data-part="reports"]');
      // It ended (or went back to wait): everything changed, so everything is drawn again.
      if (fresh?.state !== 'active' || !part) return void this.#load();
      replaceReports(part, reports(fresh));
      this.#follow(fresh);
    }, REFRESH_MS);
  }

  /** The route body that names this job (its bytes when its id is not UTF-8). */
  #named() {
    const { group, idBase64 } = this.#ref;
    return { ...(group === undefined ? {} : { group }), ...(idBase64 ? { idBase64 } : {}) };
  }

  async #act(what) {
    const { id, idBase64, group } = this.#ref;
    const path = `/api/jobs/${encodeURIComponent(id)}`;
    const asks = {
      cancel: [
        `Cancel job ${id}? It will not run${this.#waiting ? ', nor will its pending children' : ''}.`,
        { ok: 'Cancel job', danger: true },
      ],
      retry: [
        `Retry dead job ${id}? It runs again, its attempts counted from 0.`,
        { ok: 'Retry', danger: false },
      ],
      purge: [`Purge dead job ${id}? It is deleted for good.`, { ok: 'Purge', danger: true }],
    };
    try {
      if (asks[what] && !(await confirmAction(...asks[what]))) return;
      if (what === 'cancel') {
        const { cancelled } = await post(`${path}/cancel`, this.#named());
        say(cancelled, `cancelled ${id}`, `${id} was no longer waiting: nothing cancelled`);
      } else if (what === 'run-now') {
        const { rescheduled } = await post(`${path}/reschedule`, { ...this.#named(), delayMs: 0 });
        say(rescheduled, `${id} runs now`, `${id} was no longer waiting`);
      } else {
        const ids = [idBase64 ? { base64: idBase64 } : id];
        const { count } = await post(`/api/dead/${what}`, { ids, group });
        say(count, `${what === 'retry' ? 'retried' : 'purged'} ${id}`, `${id} was no longer dead`);
      }
    } catch (error) {
      toast(error.message, 'error');
    }
    await this.#changed();
  }

  async #reschedule(due) {
    const { id } = this.#ref;
    try {
      const { rescheduled } = await post(`/api/jobs/${encodeURIComponent(id)}/reschedule`, {
        ...this.#named(),
        ...due,
      });
      say(rescheduled, `rescheduled ${id}`, `${id} was no longer waiting: not rescheduled`);
    } catch (error) {
      toast(error.message, 'error');
    }
    await this.#changed();
  }

  async #changed() {
    this.#onChanged();
    if (this.dialog.open) await this.#load();
  }
}

const say = (done, yes, no) => toast(done ? yes : no, done ? 'info' : 'error');
