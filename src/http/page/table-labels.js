// What every table of the page gets from its headings, whoever draws its rows: each cell is
// labelled with its column's heading (data-label: a narrow screen shows rows as cards, each
// value under its name, see style.css), a heading stands right-aligned over figures when its
// cells do, and a heading with no text (a column of buttons) is named for screen readers.
// A MutationObserver does it as rows come and go, so the table modules need not.

const HIDDEN_NAME = 'actions';

function label(table) {
  const heads = [...(table.tHead?.rows[0]?.cells ?? [])];
  if (heads.length === 0) return;
  for (const th of heads) {
    if (th.textContent.trim() === '' && !th.querySelector('input, .visually-hidden')) {
      th.append(
        Object.assign(document.createElement('span'), {
          className: 'visually-hidden',
          textContent: HIDDEN_NAME,
        }),
      );
    }
  }
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      // A row of one cell over every column (an empty table's note) is no card of values.
      if (row.cells.length === 1 && row.cells[0].colSpan > 1) continue;
      [...row.cells].forEach((cell, i) => {
        const th = heads[i];
        if (!th) return;
        const name = th.querySelector('input, .visually-hidden') ? '' : th.textContent.trim();
        if (cell.dataset.label !== name) cell.dataset.label = name;
        if (cell.classList.contains('num')) th.classList.add('num');
      });
    }
  }
}

/** Labels every table under `root` now and whenever its rows change. */
export function labelTables(root) {
  let queued = false;
  const run = () => {
    queued = false;
    for (const table of root.querySelectorAll('table')) label(table);
  };
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    queueMicrotask(run);
  }).observe(root, { childList: true, subtree: true });
  run();
}
