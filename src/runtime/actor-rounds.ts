// An actor's timed rounds beside its loop: one timer renews leases and times out handlers
// (Jobs.housekeep), another relays the group's flow outbox (queue/flows/relay.ts).
import type { Queue } from '../queue/queue.js';
import type { ActorSettings } from './actor-types.js';
import type { Jobs } from './jobs.js';
import type { NoteRate } from './note-rate.js';
import type { StatBlock } from './stat-block.js';
import { every, later } from './timers.js';

/**
 * How often the actor relays its group's flow outbox (queue/flows/relay.ts): what a kill -9
 * between a child's ack and its parent's update left there is moved within this long.
 */
const FLOW_SWEEP_MS = 5000;

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
  #flowSweep: NodeJS.Timeout | undefined;

  constructor(parts: ActorRoundsParts) {
    this.#parts = parts;
  }

  start(): void {
    const { leaseMs, timeoutMs } = this.#parts.settings;
    // One timer renews leases (a third of the way through) and times out handlers.
    const tick = Math.min(leaseMs / 3, timeoutMs > 0 ? Math.max(50, timeoutMs / 10) : 1000);
    const jobs = this.#parts.jobs;
    this.#housekeeping = every(() => jobs.housekeep(), Math.max(50, Math.floor(tick)));
    // The group's flow outbox: once soon after the start (what a crash left), then regularly.
    const sweep = () => this.#sweepFlows();
    this.#flowSweep = later(
      () => {
        sweep();
        this.#flowSweep = every(sweep, FLOW_SWEEP_MS);
      },
      Math.floor(Math.random() * 1000),
    );
  }

  stop(): void {
    clearInterval(this.#housekeeping);
    clearInterval(this.#flowSweep); // a timeout first, then an interval: this clears either
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
