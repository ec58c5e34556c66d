// The job browser: a tab per state (delayed, ready, active, done, dead) with its count, a page
// at a time by cursor (the server's page costs what its limit costs, at any depth), an id-prefix
// search, and per row: run now (delayed), cancel (delayed, ready), retry (dead). Clicking a row
// shows the whole record. Every value goes in as text (dom.js el), so no body can run as markup.
import { ApiError, get, post } from './api.js';
import { CursorPages } from './cursor-pages.js';
import {
  confirmAction,
  el,
  fillGroupSelect,
  formatCount,
  formatMs,
  formatTime,
  replaceChildren,
  toast,
} from './dom.js';

const PAGE = 25;
const STATES = ['delayed', 'ready', 'active', 'done', 'dead'];
/** the time column each state shows beside the due time */
const WHEN = {
  active: ['lease ends', 'leaseUntil'],
  done: ['finished', 'finishedAt'],
  dead: ['died', 'diedAt'],
};

export class JobBrowser {
  #state = 'delayed';
  #pages = new CursorPages(() => this.#load());

  constructor() {
    this.tabs = document.getElementById('jobs-tabs');
    this.table = document.querySelector('#jobs table');
    this.detail = document.getElementById('jobs-detail');
    this.groupSelect = document.getElementById('jobs-group');
    this.prefixInput = document.getElementById('jobs-prefix');
    replaceChildren(
      this.tabs,
      STATES.map((state) =>
        el(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `jobs-tab-${state}`,
            dataset: { state },
            'aria-selected': String(state === this.#state),
            onclick: () => this.#choose(state),
          },
          state,
          ' ',
          el('span', { class: 'count' }, '–'),
        ),
      ),
    );
    document.getElementById('jobs-search').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#pages.restart();
    });
    this.groupSelect.addEventListener('change', () => void this.#pages.restart());
    document.getElementById('jobs-prev').addEventListener('click', () => this.#pages.move(-1));
    document.getElementById('jobs-next').addEventListener('click', () => this.#pages.move(1));
  }

  setGroups(count) {
    fillGroupSelect(this.groupSelect, count);
  }

  load() {
    return this.#pages.load();
  }

  #choose(state) {
    this.#state = state;
    for (const tab of this.tabs.children) {
      tab.setAttribute('aria-selected', String(tab.dataset.state === state));
    }
    void this.#pages.restart();
  }

  async #load() {
    const params = new URLSearchParams({ state: this.#state, limit: PAGE });
    if (this.#pages.start) params.set('cursor', this.#pages.start);
    if (this.groupSelect.value !== '') params.set('group', this.groupSelect.value);
    const prefix = this.prefixInput.value.trim();
    if (prefix) params.set('prefix', prefix);
    let page;
    try {
      page = await get(`/api/list?${params}`);
    } catch (error) {
      toast(error.message, 'error');
      return;
    }
    for (const state of STATES) {
      const tab = document.getElementById(`jobs-tab-${state}`);
      tab.querySelector('.count').textContent = formatCount(page.counts[state]);
    }
    this.#pages.next = page.cursor;
    const [whenLabel] = WHEN[this.#state] ?? [];
    const heads = ['id', 'group', 'name', 'due', 'attempts', whenLabel, 'body', ''].filter(
      (h) => h !== undefined,
    );
    replaceChildren(
      this.table,
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          heads.map((h) => el('th', {}, h)),
        ),
      ),
      el(
        'tbody',
        {},
        page.items.length === 0
          ? el(
              'tr',
              {},
              el(
                'td',
                { colspan: heads.length, class: 'empty' },
                // A prefix search looks at a bounded number of entries a page: say when to go on.
                page.cursor ? 'none on this page: look on the next' : `no ${this.#state} messages`,
              ),
            )
          : page.items.map((item) => this.#row(item)),
      ),
    );
    document.getElementById('jobs-range').textContent = page.items.length
      ? `page ${this.#pages.number} · ${formatCount(page.items.length)} shown`
      : `page ${this.#pages.number}`;
    document.getElementById('jobs-prev').disabled = this.#pages.number === 1;
    document.getElementById('jobs-next').disabled = page.cursor === null;
  }

  #row(item) {
    const [, whenField] = WHEN[this.#state] ?? [];
    const body = item.truncated ? `${item.preview}…` : item.preview;
    return el(
      'tr',
      {
        class: 'job-row',
        tabindex: 0,
        dataset: { id: item.id },
        onclick: (event) => {
          if (event.target.closest('button')) return;
          void this.#show(item);
        },
      },
      el('td', { class: 'id' }, item.id),
      el('td', { class: 'num' }, item.group),
      el('td', {}, item.name ?? ''),
      el('td', {}, item.dueAt >= 9e15 ? 'never' : formatTime(item.dueAt)),
      el('td', { class: 'num' }, item.attempts),
      whenField ? el('td', {}, formatTime(item[whenField])) : null,
      el('td', { class: 'body' }, el('code', {}, body)),
      el('td', { class: 'actions' }, this.#actions(item)),
    );
  }

  #actions(item) {
    const button = (label, action, extra = {}) =>
      el(
        'button',
        { type: 'button', 'data-action': action, onclick: () => this.#act(action, item), ...extra },
        label,
      );
    if (item.state === 'delayed')
      return [button('Run now', 'run-now'), button('Cancel', 'cancel', { class: 'danger' })];
    if (item.state === 'ready') return button('Cancel', 'cancel', { class: 'danger' });
    if (item.state === 'dead') return button('Retry', 'retry');
    return null;
  }

  async #act(action, item) {
    const path = `/api/jobs/${encodeURIComponent(item.id)}`;
    try {
      if (action === 'cancel') {
        if (!(await confirmAction(`Cancel job ${item.id}? It will not run.`))) return;
        const { cancelled } = await post(`${path}/cancel`);
        toast(
          cancelled
            ? `cancelled ${item.id}`
            : `${item.id} was no longer waiting: nothing cancelled`,
          cancelled ? 'info' : 'error',
        );
      } else if (action === 'run-now') {
        const { rescheduled } = await post(`${path}/reschedule`, { delayMs: 0 });
        toast(
          rescheduled ? `${item.id} runs now` : `${item.id} was no longer waiting`,
          rescheduled ? 'info' : 'error',
        );
      } else {
        const id = item.idBase64 ? { base64: item.idBase64 } : item.id;
        const { count } = await post('/api/dead/retry', { ids: [id], group: item.group });
        toast(
          count ? `retried ${item.id}` : `${item.id} was no longer dead`,
          count ? 'info' : 'error',
        );
      }
    } catch (error) {
      toast(error.message, 'error');
    }
    await this.load();
  }

  /** The whole record of one message: body, result, last error, attempts, timeline. */
  async #show(item) {
    let job;
    try {
      job = await get(`/api/jobs/${encodeURIComponent(item.id)}`);
    } catch (error) {
      const text = error instanceof ApiError ? error.message : String(error);
      replaceChildren(this.detail, el('p', { class: 'missing' }, text));
      return;
    }
    const fact = (name, value) => [el('dt', {}, name), el('dd', { 'data-field': name }, value)];
    const result =
      job.result === undefined
        ? job.resultKept === 'truncated'
          ? `(not kept: ${formatCount(job.resultBytes)} bytes, over the limit)`
          : '–'
        : typeof job.result === 'string'
          ? job.result
          : JSON.stringify(job.result);
    const started =
      job.finishedAt && job.durationMs !== undefined ? job.finishedAt - job.durationMs : null;
    const timeline = [
      ['added', job.enqueuedAt],
      ['due', job.dueAt],
      ['started', started],
      ['lease ends', item.leaseUntil],
      ['finished', job.finishedAt],
      ['died', item.diedAt],
    ].filter(([, at]) => at !== null && at !== undefined);
    replaceChildren(
      this.detail,
      el('h3', {}, 'Job ', el('code', {}, job.id)),
      el(
        'dl',
        {},
        fact('state', job.state),
        fact('group', job.group),
        fact('name', job.name ?? '–'),
        fact('attempts', `${job.attempts} of ${job.maxAttempts}`),
        fact('last error', job.lastError ?? '–'),
        fact('dead reason', job.deadReason ?? '–'),
        fact('duration', job.durationMs === undefined ? '–' : formatMs(job.durationMs)),
        fact('result', result),
      ),
      el(
        'ol',
        { class: 'timeline', 'data-field': 'timeline' },
        timeline.map(([what, at]) => el('li', {}, `${what}: ${formatTime(at)}`)),
      ),
      el(
        'pre',
        { class: 'job-body', 'data-field': 'body' },
        job.body.truncated ? `${job.body.text}…` : job.body.text,
      ),
    );
  }
}
