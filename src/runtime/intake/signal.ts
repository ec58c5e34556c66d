// A wake-up the intake's loops wait on. Level-triggered: a fire() with nobody waiting is
// kept, and the next wait() returns at once, so no wake-up is missed between a check and
// the wait that follows it.
export class Signal {
  #fired = false;
  #resolve: (() => void) | null = null;

  wait(): Promise<void> {
    if (this.#fired) {
      this.#fired = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
  }

  fire(): void {
    const resolve = this.#resolve;
    this.#resolve = null;
    if (resolve) resolve();
    else this.#fired = true;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
