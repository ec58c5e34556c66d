// Dead letters: a page at a time (newest first), with checkboxes; retry or purge the selected
// ones or all of them (in the chosen group), each after a confirmation (red for purge only).
// Pages go by cursor (each page's `next`), so a deep page costs the server what the first one
// does; the view keeps the cursors of the pages before, for going back. A letter's id opens
// the job view (job.js).
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
  setEnabled,
  toast,
} from './dom.js';

const PAGE = 20;

export class DeadLetterView {
  #pages = new CursorPages(() => this.#load());
  #total = 0;
  /** row id → the id as the server wants it back (text, or { base64 } for binary ids) */
  #selected = new Map();
  #wire = new Map();
  #onChanged;
  #jobView;

  /** `onChanged()`: letters were retried or purged; `jobView`: what a letter's id opens. */
  constructor(onChanged, jobView) {
    this.#onChanged = onChanged;
    this.#jobView = jobView;
    this.groupSelect = document.getElementById('dead-group');
    this.tbody = document.querySelector('#dead tbody');
    this.groupSelect.addEventListener('change', () => {
      this.#selected.clear();
      void this.#pages.restart();
    });
    document.getElementById('dead-prev').addEventListener('click', () => this.#pages.move(-1));
    document.getElementById('dead-next').addEventListener('click', () => this.#pages.move(1));
    document.getElementById('dead-select-page').addEventListener('change', (event) => {
      for (const box of this.tbody.querySelectorAll('input[type=checkbox]')) {
        box.checked = event.currentTarget.checked;
        this.#toggle(box.dataset.id, box.checked, this.#wire.get(box.dataset.id));
      }
    });
    for (const action of ['retry', 'purge']) {
      document
        .getElementById(`dead-${action}-selected`)
        .addEventListener('click', () => this.#act(action, false));
      document
        .getElementById(`dead-${action}-all`)
        .addEventListener('click', () => this.#act(action, true));
    }
  }

  /** Lists the groups in the filter once their number is known. */
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

  async #load() {
    const params = new URLSearchParams({ limit: PAGE });
    if (this.#pages.start) params.set('cursor', this.#pages.start);
    if (this.groupSelect.value !== '') params.set('group', this.groupSelect.value);
    const page = await get(`/api/dead?${params}`);
    this.#total = page.total;
    // The letters of this page went (retried, purged): back to the page before.
    if (page.letters.length === 0 && this.#pages.back()) return this.#load();
    this.#pages.next = page.next;
    replaceChildren(
      this.tbody,
      page.letters.length === 0
        ? el('tr', {}, el('td', { colspan: 9, class: 'empty' }, 'no dead letters'))
        : page.letters.map((letter) => this.#row(letter)),
    );
    const before = (this.#pages.number - 1) * PAGE;
    const first = page.letters.length ? before + 1 : 0;
    document.getElementById('dead-range').textContent =
      `${formatCount(first)}–${formatCount(before + page.letters.length)} of ${formatCount(page.total)}`;
    document.getElementById('dead-prev').disabled = this.#pages.number === 1;
    document.getElementById('dead-next').disabled = page.next === null;
    document.getElementById('dead-select-page').checked = false;
    this.#updateButtons();
    guardActions(this.tbody);
  }

  #row(letter) {
    const wire = letter.idBase64 ? { base64: letter.idBase64 } : letter.id;
    this.#wire.set(letter.id, wire);
    const box = el('input', {
      type: 'checkbox',
      'aria-label': `select ${letter.id}`,
      dataset: { id: letter.id },
      checked: this.#selected.has(letter.id),
      onchange: (event) => this.#toggle(letter.id, event.currentTarget.checked, wire),
    });
    const body = letter.body.truncated ? `${letter.body.text}…` : letter.body.text;
    const open = (event) => {
      const ref = { id: letter.id, group: letter.group };
      if (letter.idBase64) ref.idBase64 = letter.idBase64;
      void this.#jobView.open(ref, event.currentTarget);
    };
    return el(
      'tr',
      { dataset: { id: letter.id } },
      el('td', { class: 'select' }, box),
      el('td', { class: 'id' }, idButton(letter.id, open)),
      el('td', { class: 'name' }, letter.name ?? ''),
      el('td', { class: 'num' }, letter.group),
      el('td', {}, formatTime(letter.diedAt)),
      el('td', { class: 'num' }, letter.attempts),
      el('td', { class: 'reason' }, letter.reason),
      el('td', { class: 'error' }, letter.lastError ?? ''),
      el('td', { class: 'body' }, el('code', {}, body)),
    );
  }

  #toggle(id, on, wire) {
    if (on) this.#selected.set(id, wire);
    else this.#selected.delete(id);
    this.#updateButtons();
  }

  #updateButtons() {
    const some = this.#selected.size > 0;
    setEnabled(document.getElementById('dead-retry-selected'), some);
    setEnabled(document.getElementById('dead-purge-selected'), some);
  }

  async #act(action, all) {
    const group = this.groupSelect.value;
    const where = group === '' ? '' : ` in group ${group}`;
    const what = all
      ? `${action === 'retry' ? 'Retry' : 'Purge'} all ${formatCount(this.#total)} dead letters${where}?`
      : `${action === 'retry' ? 'Retry' : 'Purge'} ${this.#selected.size} selected dead letter(s)?`;
    const purge = action === 'purge';
    const warning = purge ? ' They are deleted for good.' : ' They run again, attempts from 0.';
    const ok = { ok: purge ? 'Purge' : 'Retry', danger: purge };
    if (!(await confirmAction(what + warning, ok))) return;
    const body = all ? { all: true } : { ids: [...this.#selected.values()] };
    if (group !== '') body.group = Number(group);
    try {
      const { count } = await post(`/api/dead/${action}`, body);
      toast(`${action === 'retry' ? 'retried' : 'purged'} ${count} dead letter(s)`);
      this.#selected.clear();
    } catch (error) {
      toast(error.message, 'error');
    }
    await this.reload();
    this.#onChanged();
  }
}
