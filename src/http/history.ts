// The dashboard's memory: one reading of depths and launcher figures per second, kept for the
// last ten minutes in a ring, so a page opened (or reloaded) now still draws the recent past,
// and any number of open pages cost Redis nothing more than this one reading.
import type { GroupCounts } from '../queue/queue.js';
import type { LauncherStats } from '../runtime/launcher-stats.js';
import { LatenessWindow, type WindowLateness } from './lateness-window.js';

export interface Reading {
  counts: GroupCounts[];
  launchers: LauncherStats[];
}

export interface Sample {
  at: number;
  /** per group: [delayed, ready, active, dead], or null when the group could not be read */
  depths: ([number, number, number, number] | null)[];
  /** done and failed over every launcher, as counted since each started */
  done: number;
  failed: number;
  lateness: WindowLateness;
}

export interface Latest extends Reading {
  at: number;
  /** done per second over the last few seconds, by `${launcherId}/${group}` */
  rates: Record<string, number>;
}

const RATE_WINDOW_MS = 5000;

export const actorKey = (launcherId: string, group: number) => `${launcherId}/${group}`;

export class History {
  readonly #read: () => Promise<Reading>;
  readonly #keep: number;
  readonly #everyMs: number;
  readonly #samples: Sample[] = [];
  /** recent per-actor done counts, for rates */
  readonly #recentDone: { at: number; done: Map<string, number> }[] = [];
  readonly #lateness = new LatenessWindow();
  #latest: Latest | null = null;
  #error: string | null = null;
  #sampling: Promise<void> | null = null;
  #timer: NodeJS.Timeout | undefined;

  constructor(read: () => Promise<Reading>, options: { everyMs?: number; keep?: number } = {}) {
    this.#read = read;
    this.#everyMs = options.everyMs ?? 1000;
    this.#keep = options.keep ?? 600;
  }

  start(): void {
    void this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.#everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Takes a reading now (or joins the one under way). */
  refresh(): Promise<void> {
    this.#sampling ??= this.#sample().finally(() => {
      this.#sampling = null;
    });
    return this.#sampling;
  }

  latest(): Latest | null {
    return this.#latest;
  }

  /** Why the last reading failed, or null when it worked. */
  get error(): string | null {
    return this.#error;
  }

  /** Samples taken after `at` (all of them for 0). */
  since(at: number): Sample[] {
    return this.#samples.filter((s) => s.at > at);
  }

  async #sample(): Promise<void> {
    let reading: Reading;
    try {
      reading = await this.#read();
      this.#error = null;
    } catch (error) {
      this.#error = error instanceof Error ? error.message : String(error);
      return;
    }
    const at = Date.now();
    const done = new Map<string, number>();
    let failed = 0;
    for (const launcher of reading.launchers) {
      for (const view of launcher.actors) {
        if (!view.stat) continue;
        done.set(actorKey(launcher.launcherId, view.group), view.stat.done);
        failed += view.stat.failed;
      }
    }
    this.#samples.push({
      at,
      depths: reading.counts.map((c) => (c.error ? null : [c.delayed, c.ready, c.active, c.dead])),
      done: [...done.values()].reduce((a, b) => a + b, 0),
      failed,
      lateness: this.#lateness.next(reading.launchers),
    });
    if (this.#samples.length > this.#keep)
      this.#samples.splice(0, this.#samples.length - this.#keep);
    this.#recentDone.push({ at, done });
    while ((this.#recentDone[1]?.at ?? at) <= at - RATE_WINDOW_MS) this.#recentDone.shift();
    this.#latest = { ...reading, at, rates: this.#rates() };
  }

  #rates(): Record<string, number> {
    const first = this.#recentDone[0];
    const last = this.#recentDone[this.#recentDone.length - 1];
    const rates: Record<string, number> = {};
    if (!first || !last || last.at <= first.at) return rates;
    for (const [key, done] of last.done) {
      const before = first.done.get(key);
      if (before === undefined || before > done) continue;
      rates[key] = Math.round(((done - before) * 1000) / (last.at - first.at));
    }
    return rates;
  }
}
