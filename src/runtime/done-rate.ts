// Done per second of each actor over the launcher's last publish interval (about a second), for
// `skyq stats`'s throughput column: a reading of the cumulative counters alone says nothing of
// a rate, and a one-shot `skyq stats` has only one reading.

export class DoneRates {
  #last: { at: number; done: Map<number, number> } | null = null;
  readonly #rates = new Map<number, number>();

  /** Takes a sample of each actor's done counter; the rates are from the previous sample to it. */
  sample(at: number, done: Map<number, number>): void {
    const last = this.#last;
    if (last && at > last.at) {
      for (const [group, now] of done) {
        const before = last.done.get(group) ?? now;
        // A counter that went back (a fresh block) counts from zero, not below it.
        const rate = (Math.max(0, now - before) * 1000) / (at - last.at);
        this.#rates.set(group, Math.round(rate * 10) / 10);
      }
    }
    this.#last = { at, done };
  }

  /** The group's rate, once two samples were taken. */
  rate(group: number): number | undefined {
    return this.#rates.get(group);
  }
}
