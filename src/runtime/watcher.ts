// The launcher's eye on what its idle actors were not told about. skyq's own adds push a
// wake-up token, but a program that only does `ZADD task_group:3 <due> <member>` does not, a
// token (an add's, a pause's, a resume's) can go to another launcher's actor, and a lease
// another consumer holds can run out (that consumer died or hangs). So for its idle actors
// (each publishes, in its stat block, the time it will look anyway) the watcher reads each
// group's next event, ready count and pause: on every keyspace notification where the server
// sends them, and every `intervalMs` in any case, with one script call per server for all.
// Without keyspace notifications, a standalone or Sentinel server still says when a key the
// watcher read changes (client tracking, tracking.ts): a group quiet for a second is armed that
// way and left out of the ticks, which slow to one a second once every group is
// (armed-groups.ts). An idle launcher then costs one call a second, and a raw ZADD is seen
// within a round trip. Work due before an actor's plan, or a pause or resume it missed, gets it
// poked. The same call reads the head of every idle sorted set the intake consumes
// (zsetIntake), so an idle set costs no call of its own: a set whose head falls due before its
// lane's plan gets it poked.
import calculateSlot from 'cluster-key-slot';
import { keyOf } from '../base/keys.js';
import type { Queue } from '../queue/queue.js';
import { isCluster } from '../redis/connection.js';
import { newerFormatOf } from '../redis/explain.js';
import { ArmedGroups } from './armed-groups.js';
import { type KeyspaceMode, type KeyspaceSubscription, watchKeyspace } from './keyspace.js';
import { later, untilNext } from './timers.js';
import { type Tracker, trackChanges } from './tracking.js';

/** With client tracking: how long a group is read each tick after a write, before it is armed. */
const QUIET_MS = 1000;
/** With client tracking: every idle group is read this often all the same (a lease run out). */
const SAFETY_MS = 1000;

export interface WatchSettings {
  /** how often idle groups are checked; 0 = never (default 50 ms) */
  intervalMs: number;
  /** keyspace notifications: use when on ('auto', default), turn on ('enable'), or 'off' */
  keyspaceEvents: KeyspaceMode;
}

export interface WatchedActor {
  /** when the actor will look at its group anyway (Redis ms); 0 while busy or polling */
  plannedAt(): number;
  /** whether the actor knows its group is paused */
  paused(): boolean;
  poke(): void;
}

/** A sorted set an intake lane moves from (intake/zset-lanes.ts), as the watcher sees it. */
export interface WatchedZset {
  key: string;
  unitMs: number;
  /** when the lane reads the set anyway (Redis ms; Infinity: when told); 0: busy, not watched */
  plannedAt(): number;
  /** the watcher read the set: its head's due ms (-1: empty, -2: not a sorted set), its size */
  seen(headMs: number, size: number): void;
  /** a keyspace notification announced a ZADD to it */
  poke(): void;
}

export class Watcher {
  readonly #queue: Queue;
  readonly #actors: (group: number) => WatchedActor | null;
  readonly #groups: number[];
  readonly #settings: WatchSettings;
  readonly #onProblem: (problem: string) => void;
  readonly #zsets: WatchedZset[];
  /** sorted sets being read now (a tick skips them) */
  readonly #reading = new Set<WatchedZset>();
  /** groups being checked now, and those to check again once that is done */
  readonly #checking = new Set<number>();
  readonly #again = new Set<number>();
  /** groups a keyspace notification named, until a check sent after it reads them */
  readonly #notified = new Set<number>();
  #timer: NodeJS.Timeout | undefined;
  /** when (performance.now() ms) the next tick runs */
  #tickAt = Number.POSITIVE_INFINITY;
  #keyspace: KeyspaceSubscription | null = null;
  #tracker: Tracker | null = null;
  readonly #armed = new ArmedGroups(QUIET_MS);
  /** with client tracking: when the next tick reads every idle group, armed or not */
  #safetyAt = 0;
  #closed = false;

  constructor(
    queue: Queue,
    groups: number[],
    actors: (group: number) => WatchedActor | null,
    settings: WatchSettings,
    onProblem: (problem: string) => void,
    zsets: WatchedZset[] = [],
  ) {
    this.#queue = queue;
    this.#zsets = zsets;
    this.#groups = groups;
    this.#actors = actors;
    this.#settings = settings;
    this.#onProblem = onProblem;
  }

  async start(): Promise<void> {
    const prefix = this.#queue.config.prefix;
    const byKey = new Map(this.#groups.map((g) => [keyOf(prefix, g, 'delayed'), g]));
    const zsets = new Map(this.#zsets.map((zset) => [zset.key, zset]));
    this.#keyspace = await watchKeyspace(
      this.#queue.client,
      [...byKey.keys(), ...zsets.keys()],
      this.#settings.keyspaceEvents,
      (key) => {
        zsets.get(key)?.poke();
        const group = byKey.get(key);
        if (group === undefined) return;
        this.#notified.add(group);
        this.#check([group]);
      },
      this.#onProblem,
    );
    if (this.#keyspace === null && this.#settings.intervalMs > 0 && !this.#closed) {
      this.#tracker = await trackChanges(
        this.#queue.client,
        (keys) => this.#announced(keys),
        () => {
          // Nothing is armed: every group is read each tick again, from the next one on.
          this.#armed.reset();
          this.#soon();
        },
        this.#onProblem,
      );
    }
    if (this.#closed) {
      this.#keyspace?.close();
      this.#tracker?.close();
    } else if (this.#settings.intervalMs > 0) {
      this.#nextTick(this.#settings.intervalMs);
    }
  }

  /** Whether keyspace notifications are in use (they make foreign adds as prompt as our own). */
  get notified(): boolean {
    return this.#keyspace !== null;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#keyspace?.close();
    this.#tracker?.close();
  }

  #nextTick(ms: number): void {
    clearTimeout(this.#timer);
    this.#tickAt = performance.now() + ms;
    this.#timer = later(() => this.#tick(), ms);
  }

  #tick(): void {
    const now = performance.now();
    const idle = this.#groups.filter((g) => (this.#actors(g)?.plannedAt() ?? 0) > 0);
    const zsets = this.#zsets.filter((z) => z.plannedAt() > 0 && !this.#reading.has(z));
    let poll = idle;
    let arm: number[] = [];
    if (this.#tracker) {
      ({ poll, arm } = this.#armed.plan(idle, now));
      if (now >= this.#safetyAt) {
        // Less a tick: the slow ticks keep to a grid, and one may come a little early.
        this.#safetyAt = now + Math.max(0, SAFETY_MS - this.#settings.intervalMs);
        poll = idle;
      }
    }
    for (const batch of this.#byServer(poll, zsets)) {
      this.#check(batch.groups, batch.zsets, arm);
    }
    // Slow once Redis will tell of every group's next write; sorted sets are always read.
    const told = this.#tracker !== null && this.#zsets.length === 0;
    const slow = told && this.#armed.covers(this.#groups);
    // Slow ticks keep to the grid the coordinator publishes on: one wake-up for both.
    const { intervalMs } = this.#settings;
    this.#nextTick(slow ? untilNext(Math.max(SAFETY_MS, intervalMs)) : intervalMs);
  }

  /** The keys client tracking watches for a group: where a raw ZADD, a token's message or a pause goes. */
  #trackedKeys(group: number): string[] {
    const prefix = this.#queue.config.prefix;
    return [
      keyOf(prefix, group, 'delayed'),
      keyOf(prefix, group, 'ready'),
      keyOf(prefix, group, 'paused'),
    ];
  }

  /** Client tracking announced writes to these keys (null: to every key). */
  #announced(keys: string[] | null): void {
    if (this.#closed) return;
    const now = performance.now();
    const groups =
      keys === null
        ? this.#groups
        : this.#groups.filter((g) => this.#trackedKeys(g).some((key) => keys.includes(key)));
    for (const group of groups) {
      this.#armed.announced(group, now);
      this.#notified.add(group);
    }
    if (groups.length > 0) this.#check(groups);
    // Those groups are read each tick for a while: the ticks cannot stay slow.
    this.#soon();
  }

  /** The next tick within intervalMs (the ticks were slow, and a group is read each tick again). */
  #soon(): void {
    if (this.#closed) return;
    const ms = this.#settings.intervalMs;
    if (this.#tickAt > performance.now() + ms) this.#nextTick(ms);
  }

  /** Groups and sets by the server that holds them: one call each (one on a standalone server). */
  #byServer(groups: number[], zsets: WatchedZset[]) {
    const client = this.#queue.client;
    if (!isCluster(client)) return groups.length + zsets.length > 0 ? [{ groups, zsets }] : [];
    const batches = new Map<string, { groups: number[]; zsets: WatchedZset[] }>();
    const batchOf = (key: string) => {
      const slot = calculateSlot(key);
      const master = client.slots[slot]?.[0] ?? `slot ${slot}`;
      const batch = batches.get(master) ?? { groups: [], zsets: [] };
      batches.set(master, batch);
      return batch;
    };
    for (const group of groups) {
      batchOf(keyOf(this.#queue.config.prefix, group, 'delayed')).groups.push(group);
    }
    for (const zset of zsets) batchOf(zset.key).zsets.push(zset);
    return [...batches.values()];
  }

  /** `arm`: groups whose keys the tracker reads first (the check follows that read). */
  #check(groups: number[], zsets: WatchedZset[] = [], arm: number[] = []): void {
    const fresh = groups.filter((group) => {
      if (!this.#checking.has(group)) return true;
      this.#again.add(group);
      return false;
    });
    this.#armed.disarm(arm.filter((group) => !fresh.includes(group)));
    if ((fresh.length === 0 && zsets.length === 0) || this.#closed) return;
    for (const group of fresh) this.#checking.add(group);
    for (const zset of zsets) this.#reading.add(zset);
    // This call is sent after those notifications: its reply shows what they announced.
    const notified = new Set(fresh.filter((group) => this.#notified.delete(group)));
    const { prefix, unitMs } = this.#queue.config;
    const sets = zsets.flatMap((zset) => [zset.key, zset.unitMs]);
    const route = fresh.length > 0 ? keyOf(prefix, fresh[0] as number, 'delayed') : sets[0];
    const arming = fresh
      .filter((group) => arm.includes(group))
      .flatMap((g) => this.#trackedKeys(g));
    const armed = this.#tracker && arming.length > 0 ? this.#tracker.arm(arming) : null;
    (armed ?? Promise.resolve())
      .then(() =>
        this.#queue.runMulti('watch-many', route as string, [
          unitMs,
          prefix,
          ...fresh,
          ...(sets.length > 0 ? ['zsets', ...sets] : []),
        ]),
      )
      .then(
        (reply) => {
          const flat = reply as number[];
          for (const [i, group] of fresh.entries()) {
            this.#judge(group, flat.slice(i * 3, i * 3 + 3), notified.has(group));
          }
          const after = fresh.length * 3;
          for (const [i, zset] of zsets.entries()) {
            zset.seen(flat[after + i * 2] as number, flat[after + i * 2 + 1] as number);
          }
        },
        (error: unknown) => {
          // A newer skyq's data: each idle actor claims once, is refused, and says so.
          if (newerFormatOf(error) !== null) {
            for (const group of fresh) this.#actors(group)?.poke();
            return;
          }
          // Slots moving between masters (a failover): check them one group per call next time.
          if (fresh.length > 1) for (const group of fresh) this.#again.add(group);
        },
      )
      .finally(() => {
        for (const zset of zsets) this.#reading.delete(zset);
        for (const group of fresh) this.#checking.delete(group);
        const again = fresh.filter((group) => this.#again.delete(group));
        for (const group of again) this.#check([group]);
      });
  }

  /**
   * Pokes the group's actor when there is work it does not know of. A busy actor polls anyway,
   * except at one moment: a poll sent before a notified ZADD that answers after it, so the actor
   * goes idle without it. After a notification, a busy actor is poked too: the waker keeps the
   * poke, and its next wait ends at once (one extra claim; the next tick covers the rest).
   * A pause or resume sends one token, which may go to another launcher's actor of the group:
   * an idle actor that has not seen it is poked, and its claim's reply tells it.
   */
  #judge(group: number, [nextMs, ready, paused]: number[], notified: boolean): void {
    const actor = this.#actors(group);
    if (!actor) return;
    const plan = actor.plannedAt();
    const missed = plan > 0 && (paused === 1) !== actor.paused();
    if (missed) actor.poke();
    if (missed || paused) return;
    const work = (ready ?? 0) > 0 || (nextMs ?? -1) >= 0;
    if (plan <= 0) {
      if (notified && work) actor.poke();
    } else if ((ready ?? 0) > 0 || ((nextMs ?? -1) >= 0 && (nextMs as number) < plan)) {
      actor.poke();
    }
  }
}
