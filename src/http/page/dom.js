// Building the page from data without ever parsing it as markup: every string goes in through
// text nodes (textContent), so a body like <img onerror=…> is shown, never run.

/** el('td', { class: 'num' }, 'text', child) */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

/** A group filter's options: 'all', then 0 … count − 1, keeping the choice made. */
export function fillGroupSelect(select, count) {
  if (select.options.length === count + 1) return;
  const chosen = select.value;
  replaceChildren(
    select,
    el('option', { value: '' }, 'all'),
    Array.from({ length: count }, (_, g) => el('option', { value: g }, String(g))),
  );
  select.value = chosen;
}

export function setText(id, text) {
  const node = document.getElementById(id);
  if (node.textContent !== String(text)) node.textContent = String(text);
}

const numbers = new Intl.NumberFormat('en');
export const formatCount = (n) => (n === null || n === undefined ? '–' : numbers.format(n));

export function formatMs(ms) {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

const times = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });
export const formatTime = (ms) => (ms ? times.format(new Date(ms)) : '–');

let toastTimer;
/** A short message at the bottom of the page. */
export function toast(text, kind = 'info') {
  const node = document.getElementById('toast');
  node.textContent = text;
  node.className = kind;
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    node.hidden = true;
  }, 5000);
}

/**
 * Asks in the page's own dialog; resolves true only on its OK button. The button says what it
 * does (`ok`, e.g. "Retry") and is red only for what cannot be undone (`danger`: purge, cancel).
 */
export function confirmAction(text, { ok = 'Confirm', danger = true } = {}) {
  const dialog = document.getElementById('confirm');
  const button = document.getElementById('confirm-ok');
  document.getElementById('confirm-text').textContent = text;
  button.textContent = ok;
  button.className = danger ? 'danger' : 'primary';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

// Whether Redis answered the last reading. Until it does (a page opened while Redis is down),
// every action (button.act) is disabled; a button also disabled for its own reason (nothing
// selected) says so with setEnabled, and stays disabled when Redis comes back.
let redisUp = false;

export const isRedisUp = () => redisUp;

/** An action button's own state; it is enabled only when that and Redis allow. */
export function setEnabled(button, enabled) {
  button.dataset.own = enabled ? '1' : '0';
  button.disabled = !(enabled && redisUp);
}

/** Records whether Redis answers, and enables or disables every action to match. */
export function setRedisUp(up) {
  redisUp = up;
  guardActions();
}

/** Disables the actions under `root` while Redis does not answer (call after drawing some). */
export function guardActions(root = document) {
  for (const button of root.querySelectorAll('button.act, #schedules tbody button')) {
    button.disabled = !(button.dataset.own !== '0' && redisUp);
  }
}

/** A button naming a message by id; it opens the job view (job.js). */
export const idButton = (id, onclick) =>
  el('button', { type: 'button', class: 'link id-link', title: 'open this job', onclick }, id);
