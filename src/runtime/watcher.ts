// The launcher's eye on what its idle actors were not told about. skyq's own
// adds push a wake-up token, but a program that only does `ZADD task_group:3
// <due> <member>` does not, a token can go to another launcher's actor, and a
// lease another consumer holds can run out (that consumer died or hangs).
// So for each idle actor (it publishes the time it will look anyway in its
// stat block) the watcher checks the group's next event and ready set: on
// every keyspace notification where the server sends them, and every
// `intervalMs` in any case. Work due before the actor's plan gets it poked.
import type { Queue } from '../queue.js';
import { type KeyspaceMode, type KeyspaceSubscription, watchKeyspace } from './keyspace.js';
import { every } from './timers.js';

export interface WatchSettings {
  /** how often idle groups are checked; 0 = never (default 50 ms) */
  intervalMs: number;
  /** keyspace notifications: use when on ('auto', default), turn on ('enable'), or 'off' */
  keyspaceEvents: KeyspaceMode;
}

export interface WatchedActor {
  /** when the actor will look at its group anyway (Redis ms); 0 while busy; null when none */
  plannedAt(): number | null;
  poke(): void;
}

export class Watcher {
  readonly #queue: Queue;
  readonly #actors: (group: number) => WatchedActor | null;
  readonly #groups: number[];
  readonly #settings: WatchSettings;
  readonly #onProblem: (problem: string) => void;
  /** groups being checked now, and those to check again once that is done */
  readonly #checking = new Set<number>();
  readonly #again = new Set<number>();
  #timer: NodeJS.Timeout | undefined;
  #keyspace: KeyspaceSubscription | null = null;
  #closed = false;

  constructor(
    queue: Queue,
    groups: number[],
    actors: (group: number) => WatchedActor | null,
    settings: WatchSettings,
    onProblem: (problem: string) => void,
  ) {
    this.#queue = queue;
    this.#groups = groups;
    this.#actors = actors;
    this.#settings = settings;
    this.#onProblem = onProblem;
  }

  async start(): Promise<void> {
    const byKey = new Map(this.#groups.map((g) => [`${this.#queue.config.prefix}:${g}`, g]));
    this.#keyspace = await watchKeyspace(
      this.#queue.client,
      [...byKey.keys()],
      this.#settings.keyspaceEvents,
      (key) => {
        const group = byKey.get(key);
        if (group !== undefined) this.#check(group);
      },
      this.#onProblem,
    );
    if (this.#closed) this.#keyspace?.close();
    else if (this.#settings.intervalMs > 0) {
      this.#timer = every(() => {
        for (const group of this.#groups) this.#check(group);
      }, this.#settings.intervalMs);
    }
  }

  /** Whether keyspace notifications are in use (they make foreign adds as prompt as our own). */
  get notified(): boolean {
    return this.#keyspace !== null;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#keyspace?.close();
  }

  #check(group: number): void {
    const planned = this.#actors(group)?.plannedAt();
    if (!planned || this.#closed) return; // busy actors poll anyway; no actor, nobody to poke
    if (this.#checking.has(group)) {
      this.#again.add(group);
      return;
    }
    this.#checking.add(group);
    this.#queue
      .run('watch', group, [this.#queue.config.unitMs])
      .then(
        (reply) => {
          const [headMs, ready, paused] = reply as number[];
          const actor = this.#actors(group);
          const plan = actor?.plannedAt();
          if (actor && plan && !paused && (ready > 0 || (headMs >= 0 && headMs < plan))) {
            actor.poke();
          }
        },
        () => undefined, // Redis away: the actors notice and say so themselves
      )
      .finally(() => {
        this.#checking.delete(group);
        if (this.#again.delete(group)) this.#check(group);
      });
  }
}
