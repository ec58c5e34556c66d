// What an intake shows about each of its lists: `skyq stats`, the dashboard and
// /metrics read these from the launcher's figures (LauncherStats.intake).
import type { ScoreUnit } from '../../queue/config.js';

/** One intake list's figures, as a launcher reports them. */
export interface IntakeListFigures {
  /** the source: a Redis list, or a sorted set (with scoreUnit) */
  list: string;
  /** a sorted set's (zsetIntake): the unit of its scores; absent for a list */
  scoreUnit?: ScoreUnit;
  /** the group its items go to */
  group: number;
  /** their priority */
  priority: number;
  /** items waiting in the list (a sorted set: members, due or not) when last read (null: it could not be read) */
  length: number | null;
  /** items this launcher moved into skyq from it (dead letters included) */
  items: number;
  /** items a second, over the last few seconds */
  rate: number;
  /** why the list cannot be read now (a key of the wrong type, …) */
  error: string | null;
}

/** A per-second rate over a sliding window of a few seconds, from a growing total. */
export class RateWindow {
  readonly #samples: { at: number; total: number }[] = [];
  readonly #windowMs: number;

  constructor(windowMs = 5000) {
    this.#windowMs = windowMs;
  }

  rate(total: number, now = Date.now()): number {
    const samples = this.#samples;
    samples.push({ at: now, total });
    while (samples.length > 2 && (samples[0] as { at: number }).at < now - this.#windowMs) {
      samples.shift();
    }
    const first = samples[0] as { at: number; total: number };
    const spanMs = now - first.at;
    return spanMs > 0 ? ((total - first.total) * 1000) / spanMs : 0;
  }
}

/** Something an intake keeps meeting (a wrong-type key, Redis away) is logged once a minute. */
export class OncePerMinute {
  readonly #last = new Map<string, { text: string; at: number; held: number }>();

  /** Whether to log `text` for `topic` now, and how many were held back since the last one. */
  take(topic: string, text: string, now = Date.now()): { log: boolean; held: number } {
    const last = this.#last.get(topic);
    if (last && last.text === text && now - last.at < 60_000) {
      last.held++;
      return { log: false, held: 0 };
    }
    this.#last.set(topic, { text, at: now, held: 0 });
    return { log: true, held: last?.text === text ? last.held : 0 };
  }

  clear(topic: string): void {
    this.#last.delete(topic);
  }
}
