// Which of the watcher's groups Redis will tell it about, and which it must read each tick.
// A group is armed once its keys were read on the tracking connection (tracking.ts): the next
// write to them is announced, and ticks leave it alone. An announcement disarms it, and it
// is read every tick again until it has been quiet for quietMs: a group that is written to all
// the time (a steady producer) would otherwise cost an announcement and a re-arming read per
// write; this way it costs at most one of each per quietMs, on top of the reads it got before.
export class ArmedGroups {
  readonly #quietMs: number;
  readonly #armed = new Set<number>();
  /** per group: when (performance.now() ms) it may be armed again */
  readonly #quietFrom = new Map<number, number>();

  constructor(quietMs: number) {
    this.#quietMs = quietMs;
  }

  /**
   * For a tick's idle groups: those to read now (not armed), and among them those quiet long
   * enough to arm with this read (counted as armed from now on).
   */
  plan(idle: number[], now: number): { poll: number[]; arm: number[] } {
    const poll = idle.filter((group) => !this.#armed.has(group));
    const arm = poll.filter((group) => now >= (this.#quietFrom.get(group) ?? 0));
    for (const group of arm) this.#armed.add(group);
    return { poll, arm };
  }

  /** A write to one of the group's keys was announced: read it each tick for a while. */
  announced(group: number, now: number): void {
    this.#armed.delete(group);
    this.#quietFrom.set(group, now + this.#quietMs);
  }

  /** Planned for arming, but not read after all (already being checked): not armed. */
  disarm(groups: number[]): void {
    for (const group of groups) this.#armed.delete(group);
  }

  /** Tracking was lost (a reconnect, a failed arming read): nothing is armed. */
  reset(): void {
    this.#armed.clear();
  }

  /** Whether every one of `groups` is armed: then the watcher's ticks can slow down. */
  covers(groups: number[]): boolean {
    return groups.every((group) => this.#armed.has(group));
  }
}
