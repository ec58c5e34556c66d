// The times an actor's group (or its launcher) was paused, on Redis's clock, so that lateness
// leaves them out: a message due while the group was paused is late from the resume, and one
// due before the pause is late by the time before and after it, never by the pause itself
// (issue 14, item 10). Each actor sees its group's pauses in its own claims' replies: pause.lua
// wakes one consumer at once, and resume pushes a token, so the windows are within a claim of
// the real ones.

/** Enough pauses for any message still waiting to have sat through; older ones are forgotten. */
const KEPT = 16;

export class PauseWindows {
  #since: number | null = null;
  readonly #windows: { from: number; to: number }[] = [];

  /** Seen paused at `at` (Redis ms); a pause already open keeps its start. */
  paused(at: number): void {
    this.#since ??= at;
  }

  /** Seen running again at `at`: the open pause becomes a window. */
  resumed(at: number): void {
    if (this.#since === null) return;
    this.#windows.push({ from: this.#since, to: Math.max(this.#since, at) });
    if (this.#windows.length > KEPT) this.#windows.shift();
    this.#since = null;
  }

  /** How late a start at `now` is for a message due at `dueAt`, paused time left out. */
  lateness(dueAt: number, now: number): number {
    let late = now - dueAt;
    for (const { from, to } of this.#windows) {
      const overlap = Math.min(now, to) - Math.max(dueAt, from);
      if (overlap > 0) late -= overlap;
    }
    return late;
  }
}
