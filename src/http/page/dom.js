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

/** Asks in the page's own dialog; resolves true only on Confirm. */
export function confirmAction(text) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}
