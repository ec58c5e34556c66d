// The dashboard's memory: one reading of depths and launcher figures per second, kept for the
// last ten minutes in a ring, so a page opened (or reloaded) now still draws the recent past,
// and any number of open pages cost Redis nothing more than this one reading.
import type { GroupCounts } from '../queue/queue.js';
import type { LauncherStats } from '../runtime/launcher-stats.js';
import { LatenessWindow, type WindowLateness } from './lateness-window.js';
import { ThroughputWindow } from './throughput-window.js';

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
  /** done per second over every launcher, on their own clocks (null until known) */
  rate: number | null;
  lateness: WindowLateness;
}

export interface Latest extends Reading {
  at: number;
  /** done per second over the last few seconds, by `${launcherId}/${group}` */
  rates: Record<string, number>;
}

export const actorKey = (launcherId: string, group: number) => `${launcherId}/${group}`;

export class History {
  readonly #read: () => Promise<Reading>;
  readonly #keep: number;
  readonly #everyMs: number;
  readonly #samples: Sample[] = [];
  readonly #throughput = new ThroughputWindow(actorKey);
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
    let done = 0;
    let failed = 0;
    for (const launcher of reading.launchers) {
      for (const view of launcher.actors) {
        done += view.stat?.done ?? 0;
        failed += view.stat?.failed ?? 0;
      }
    }
    const rates = this.#throughput.next(reading.launchers, at);
    this.#samples.push({
      at,
      depths: reading.counts.map((c) => (c.error ? null : [c.delayed, c.ready, c.active, c.dead])),
      done,
      failed,
      rate: rates.total,
      lateness: this.#lateness.next(reading.launchers),
    });
    if (this.#samples.length > this.#keep)
      this.#samples.splice(0, this.#samples.length - this.#keep);
    this.#latest = { ...reading, at, rates: rates.actors };
  }
}
