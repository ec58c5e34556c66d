// Done per second, on each launcher's own clock. A launcher publishes its figures every second
// and the stand-alone dashboard reads them every second: two independent timers, which drift
// past each other. Near that crossing a reading finds the same publish twice (and the next one
// two at once), so a rate taken between the dashboard's readings showed 0 and then twice the
// rate. Rates here divide by the time between a launcher's own figures (`at`), and a reading
// that brings nothing new from a launcher keeps the rate its last new figures gave.
import type { LauncherStats } from '../runtime/launcher-stats.js';

/** Over how much of a launcher's time the per-actor rates are taken. */
const ACTOR_WINDOW_MS = 5000;
/**
 * Figures unchanged for this long (the dashboard's clock) come from a launcher that stopped
 * publishing: a busy one publishes every second, an idle one at least every 2 s.
 */
const STALE_MS = 3500;

interface Figures {
  /** the launcher's clock */
  at: number;
  /** done per actor key */
  done: Map<string, number>;
}

interface Track {
  figures: Figures[];
  /** when (the dashboard's clock) the newest figures were first seen */
  seenAt: number;
  /** done / s between the two newest figures */
  rate: number | null;
}

export class ThroughputWindow {
  readonly #tracks = new Map<string, Track>();
  readonly #key: (launcherId: string, group: number) => string;

  constructor(key: (launcherId: string, group: number) => string) {
    this.#key = key;
  }

  /**
   * Takes one reading (`now` on the dashboard's clock). `total`: done / s over every launcher,
   * null until some launcher has been seen twice; `actors`: done / s per actor key.
   */
  next(
    launchers: LauncherStats[],
    now: number,
  ): { total: number | null; actors: Record<string, number> } {
    const seen = new Set<string>();
    let total: number | null = null;
    const actors: Record<string, number> = {};
    for (const launcher of launchers) {
      seen.add(launcher.launcherId);
      const track = this.#note(launcher, now);
      const stale = now - track.seenAt > STALE_MS;
      if (track.rate !== null) total = (total ?? 0) + (stale ? 0 : track.rate);
      const newest = track.figures.at(-1) as Figures;
      const oldest = track.figures[0] as Figures;
      if (newest.at <= oldest.at) continue;
      for (const [key, done] of newest.done) {
        const before = oldest.done.get(key);
        if (before === undefined || before > done) continue;
        actors[key] = stale ? 0 : Math.round(((done - before) * 1000) / (newest.at - oldest.at));
      }
    }
    for (const id of this.#tracks.keys()) if (!seen.has(id)) this.#tracks.delete(id);
    return { total: total === null ? null : Math.round(total * 10) / 10, actors };
  }

  #note(launcher: LauncherStats, now: number): Track {
    const done = new Map<string, number>();
    for (const view of launcher.actors) {
      if (view.stat) done.set(this.#key(launcher.launcherId, view.group), view.stat.done);
    }
    const figures: Figures = { at: launcher.at, done };
    let track = this.#tracks.get(launcher.launcherId);
    if (!track) {
      track = { figures: [figures], seenAt: now, rate: null };
      this.#tracks.set(launcher.launcherId, track);
      return track;
    }
    const last = track.figures.at(-1) as Figures;
    // The same publish read again: nothing new, the last rate stands.
    if (launcher.at <= last.at) return track;
    track.rate = Math.max(0, (sum(done) - sum(last.done)) * 1000) / (launcher.at - last.at);
    track.figures.push(figures);
    track.seenAt = now;
    while ((track.figures[1]?.at ?? launcher.at) <= launcher.at - ACTOR_WINDOW_MS) {
      track.figures.shift();
    }
    return track;
  }
}

const sum = (done: Map<string, number>) => [...done.values()].reduce((a, b) => a + b, 0);
