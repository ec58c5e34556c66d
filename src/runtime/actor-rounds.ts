// An actor's timed rounds beside its loop. Each timer that fires wakes the thread, and on this
// machine a wake-up of a sleeping thread costs about as much as the work it does; so an idle
// actor keeps one timer only:
// - housekeeping (Jobs.housekeep: lease renewals, handler time limits) runs only while the
//   actor holds messages, started by busy() and stopping itself when none are left;
// - the chores round writes the heartbeat the launcher watches (hang-watch.ts) and, every
//   CHORES_MS, relays the group's flow outbox (queue/flows/relay.ts) and runs the chores the
//   thread added (schedule repair, the connection's PING): their calls go out together, so
//   their replies come back together.
import type { Queue } from '../queue/queue.js';
import type { ActorSettings } from './actor-types.js';
import type { Jobs } from './jobs.js';
import type { NoteRate } from './note-rate.js';
import type { StatBlock } from './stat-block.js';
import { every, later } from './timers.js';

/**
 * How often an actor's chores run: what a kill -9 between a flow child's ack and its parent's
 * update left in the outbox is relayed within this long, and a lost schedule occurrence is
 * repaired within it.
 */
export const CHORES_MS = 5000;

export interface ActorRoundsParts {
  settings: ActorSettings;
  queue: Queue;
  jobs: Jobs;
  stats: StatBlock;
  errors: NoteRate;
  /** the group's data format is newer than ours: the relay leaves it alone */
  halted(): boolean;
}

export class ActorRounds {
  readonly #parts: ActorRoundsParts;
  #housekeeping: NodeJS.Timeout | undefined;
  #chores: NodeJS.Timeout | undefined;
  #firstChores: NodeJS.Timeout | undefined;
  readonly #added: (() => void)[] = [];
  /** beats since the last chores */
  #beats = 0;
  #running = false;

  constructor(parts: ActorRoundsParts) {
    this.#parts = parts;
  }

  /** A chore for every round (the thread's schedule repair and PING), besides the flow relay. */
  addChore(chore: () => void): void {
    this.#added.push(chore);
  }

  start(): void {
    this.#running = true;
    const { beatMs } = this.#parts.settings;
    const rounds = Math.max(1, Math.round(CHORES_MS / beatMs));
    this.#parts.stats.beat();
    // The first chores come soon after the start (what a crash left), at a random moment so
    // that restarted actors do not all call at once; then every CHORES_MS.
    this.#firstChores = later(() => this.#choresRound(), Math.floor(Math.random() * 1000));
    this.#chores = every(() => {
      this.#parts.stats.beat();
      if (++this.#beats < rounds) return;
      this.#beats = 0;
      this.#choresRound();
    }, beatMs);
  }

  /** The actor holds messages: housekeeping runs until it holds none. */
  busy(): void {
    if (this.#housekeeping || !this.#running) return;
    const { settings, jobs } = this.#parts;
    const { leaseMs, timeoutMs } = settings;
    // Renew leases a third of the way through; time handlers out to a tenth of their limit.
    const tick = Math.min(leaseMs / 3, timeoutMs > 0 ? Math.max(50, timeoutMs / 10) : 1000);
    this.#housekeeping = every(
      () => {
        jobs.housekeep();
        if (jobs.size > 0) return;
        clearInterval(this.#housekeeping);
        this.#housekeeping = undefined;
      },
      Math.max(50, Math.floor(tick)),
    );
  }

  stop(): void {
    this.#running = false;
    clearInterval(this.#housekeeping);
    this.#housekeeping = undefined;
    clearInterval(this.#chores);
    clearTimeout(this.#firstChores);
  }

  #choresRound(): void {
    this.#sweepFlows();
    for (const chore of this.#added) chore();
  }

  /** One relay round of the group's flow outbox; a failure is noted, the next one retries. */
  #sweepFlows(): void {
    const { settings, queue, stats, errors } = this.#parts;
    if (this.#parts.halted()) return;
    queue.flows.sweep(settings.group).then(
      () => undefined,
      (error: unknown) => errors.note('flow outbox relay failed', error, stats),
    );
  }
}
