// An actor's modes and the only ways between them, in the manner of graphile-worker's
// LocalQueue: every change goes through enter(), which refuses a transition the table does
// not name, so a bug shows as an error at the change, not as an actor quietly claiming in
// the wrong mode. The mode lives in the actor's StatBlock, where stats() and the dashboard
// read it without asking the thread.
//
//   starting → running        start(): the loop begins
//   running ⇄ paused          each claim's reply says whether the group is paused
//   running/paused ⇄ halted   a newer skyq wrote the group's data format: claims are refused
//                             (lua/format-guard.lua) until the format is ours again
//   any of the three → draining → stopped    drain(): finish or hand back, then end
//
// The trade-off: one mode at a time. A group both paused and of a newer format is halted
// (the format is read first, by the claim itself); once the format is ours again the next
// claim's reply says whether it is paused.
import type { ActorState, StatBlock } from './stat-block.js';

const NEXT: Record<ActorState, readonly ActorState[]> = {
  starting: ['running', 'draining'],
  running: ['paused', 'halted', 'draining'],
  paused: ['running', 'halted', 'draining'],
  halted: ['running', 'paused', 'draining'],
  draining: ['stopped'],
  stopped: [],
};

/** The modes in which the loop goes on claiming (or trying to). */
const LOOPING: ReadonlySet<ActorState> = new Set(['running', 'paused', 'halted']);

export class ActorModes {
  readonly #stats: StatBlock;
  readonly #group: number;

  constructor(stats: StatBlock, group: number) {
    this.#stats = stats;
    this.#group = group;
  }

  get now(): ActorState {
    return this.#stats.state;
  }

  /** The loop goes on: running, paused or halted. */
  get looping(): boolean {
    return LOOPING.has(this.#stats.state);
  }

  /** Changes mode; returns false when it is that mode already; throws on a change not in the table. */
  enter(next: ActorState): boolean {
    const now = this.#stats.state;
    if (now === next) return false;
    if (!NEXT[now].includes(next))
      throw new Error(`actor ${this.#group}: no way from ${now} to ${next}`);
    this.#stats.state = next;
    return true;
  }
}
