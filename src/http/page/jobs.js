// The job browser: a tab per state (delayed, ready, active, done, dead, and waiting: flow
// parents waiting for their children) with its count, a page
// at a time by cursor (the server's page costs what its limit costs, at any depth; done and dead
// newest first), an id-prefix search, and per row: run now (delayed), cancel (delayed, ready),
// retry (dead). A row's id (or a click on the row) opens the job view (job.js). Every value
// goes in as text (dom.js el), so no body can run as markup.
import { get, post } from './api.js';
import { CursorPages } from './cursor-pages.js';
import {
  confirmAction,
  el,
  fillGroupSelect,
  formatCount,
  formatTime,
  guardActions,
  idButton,
  replaceChildren,
  toast,
} from './dom.js';

const PAGE = 25;
const STATES = ['delayed', 'ready', 'active', 'done', 'dead', 'waiting'];
/** A tab's name: the done tab counts the kept history, not done since start (the total card). */
const TAB_NAMES = { done: 'done (kept)', waiting: 'waiting (flows)' };
/** the order pages read in, by state (the server's default) */
const ORDER = { done: 'newest first', dead: 'newest first' };
/** the time column each state shows beside the due time */
const WHEN = {
  active: ['lease ends', 'leaseUntil'],
  done: ['finished', 'finishedAt'],
  dead: ['died', 'diedAt'],
  waiting: ['waiting since', 'waitingSince'],
};

export class JobBrowser {
  #state = 'delayed';
  #pages = new CursorPages(() => this.#load());
  #jobView;

  /** `jobView`: the job view rows open (job.js). */
  constructor(jobView) {
    this.#jobView = jobView;
    this.tabs = document.getElementById('jobs-tabs');
    this.table = document.querySelector('#jobs table');
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
          TAB_NAMES[state] ?? state,
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

  /** Loads this page again, even when a load is under way (after an action). */
  reload() {
    return this.#pages.load(true);
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
    const order = ORDER[this.#state] ? ` · ${ORDER[this.#state]}` : '';
    document.getElementById('jobs-range').textContent = page.items.length
      ? `page ${this.#pages.number} · ${formatCount(page.items.length)} shown${order}`
      : `page ${this.#pages.number}`;
    document.getElementById('jobs-prev').disabled = this.#pages.number === 1;
    document.getElementById('jobs-next').disabled = page.cursor === null;
    guardActions(this.table);
  }

  /** The job view of a row's message. */
  #open(item, opener) {
    const ref = { id: item.id, group: item.group };
    if (item.idBase64) ref.idBase64 = item.idBase64;
    void this.#jobView.open(ref, opener);
  }

  #row(item) {
    const [, whenField] = WHEN[this.#state] ?? [];
    // A done job's big body is not kept (its preview is empty): say so, as the job view does.
    const body =
      item.bodyKept === false
        ? el('span', { class: 'hint' }, 'not kept (over 64 KiB)')
        : el('code', {}, item.truncated ? `${item.preview}…` : item.preview);
    return el(
      'tr',
      {
        class: 'job-row',
        dataset: { id: item.id },
        onclick: (event) => {
          if (event.target.closest('button, input, a')) return;
          this.#open(item, event.currentTarget.querySelector('.id-link'));
        },
      },
      el(
        'td',
        { class: 'id' },
        idButton(item.id, (event) => this.#open(item, event.currentTarget)),
      ),
      el('td', { class: 'num' }, item.group),
      el('td', {}, item.name ?? ''),
      el('td', {}, item.dueAt >= 9e15 ? 'never' : formatTime(item.dueAt)),
      el('td', { class: 'num' }, item.attempts),
      whenField ? el('td', {}, formatTime(item[whenField])) : null,
      el('td', { class: 'body' }, body),
      el('td', { class: 'actions' }, this.#actions(item)),
    );
  }

  #actions(item) {
    const button = (label, action, extra = {}) =>
      el(
        'button',
        {
          type: 'button',
          class: extra.class ? `act ${extra.class}` : 'act',
          'data-action': action,
          onclick: () => this.#act(action, item),
        },
        label,
      );
    if (item.state === 'delayed')
      return [button('Run now', 'run-now'), button('Cancel', 'cancel', { class: 'danger' })];
    if (item.state === 'ready' || item.state === 'waiting')
      return button('Cancel', 'cancel', { class: 'danger' });
    if (item.state === 'dead') return button('Retry', 'retry');
    return null;
  }

  async #act(action, item) {
    const path = `/api/jobs/${encodeURIComponent(item.id)}`;
    try {
      if (action === 'cancel') {
        const ask = `Cancel job ${item.id}? It will not run.`;
        if (!(await confirmAction(ask, { ok: 'Cancel job', danger: true }))) return;
        const { cancelled } = await post(`${path}/cancel`, this.#named(item));
        toast(
          cancelled
            ? `cancelled ${item.id}`
            : `${item.id} was no longer waiting: nothing cancelled`,
          cancelled ? 'info' : 'error',
        );
      } else if (action === 'run-now') {
        const { rescheduled } = await post(`${path}/reschedule`, {
          ...this.#named(item),
          delayMs: 0,
        });
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
    await this.reload();
  }

  /** What a job route needs beside the path's id: the group, and the bytes of a binary id. */
  #named(item) {
    return { group: item.group, ...(item.idBase64 ? { idBase64: item.idBase64 } : {}) };
  }
}
