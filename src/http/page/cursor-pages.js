// Where a view that pages by cursor stands: the cursor each page so far starts at ('' for the
// first), the next page's cursor from the last reply, and one load at a time. A refresh while a
// page is on its way joins that load; a new page (restart, move) waits for it and loads again,
// since the load under way read the old tab, group and cursor. The job browser and the dead
// letters page by it.
export class CursorPages {
  #starts = [''];
  #loading = null;
  #fetch;
  /** the cursor of the page after this one, from the last reply (null: none) */
  next = null;

  /** `fetch` loads and shows the page that starts at `this.start`. */
  constructor(fetch) {
    this.#fetch = fetch;
  }

  /** this page's cursor ('' for the first page) */
  get start() {
    return this.#starts.at(-1);
  }

  /** this page's number, from 1 */
  get number() {
    return this.#starts.length;
  }

  /** Loads this page; `fresh`: even when a load is under way (after it). */
  load(fresh = false) {
    if (this.#loading && !fresh) return this.#loading;
    const before = this.#loading?.catch(() => undefined) ?? Promise.resolve();
    const loading = before
      .then(() => this.#fetch())
      .finally(() => {
        if (this.#loading === loading) this.#loading = null;
      });
    this.#loading = loading;
    return loading;
  }

  /** Back to the first page, and loads it. */
  restart() {
    this.#starts = [''];
    return this.load(true);
  }

  /** One page on (1) or back (-1), and loads it. */
  move(by) {
    if (by > 0 && this.next) this.#starts.push(this.next);
    if (by < 0) this.back();
    return this.load(true);
  }

  /** Forgets this page for the one before (without loading); false on the first page. */
  back() {
    if (this.#starts.length === 1) return false;
    this.#starts.pop();
    return true;
  }
}
