// The relay of flow outcomes across slots (lua/flow-lib.lua). A child whose parent lives in
// another slot leaves its outcome in its own slot's outbox; a round here moves them:
//   1. flow-sweep.lua in the child's group: the entries still to relay (and, on the way, the
//      flow data of ended parents no longer kept is dropped);
//   2. flow-child-done.lua in each parent's group: records each outcome once (idempotent);
//   3. flow-sweep.lua again: clears the entries a relay found recorded already, or whose
//      parent no longer waits. An entry recorded by this very round stays until a later round
//      finds it recorded: a failover that lost the parent's write (replication is async) is
//      then repaired by that round instead of leaving the parent waiting for good.
// The client that acked or failed a child kicks a round at once (queue.ack, poll, fail,
// cancel); every launcher's actors sweep their group every few seconds (src/runtime/actor.ts),
// which also picks up what a kill -9 between the steps left behind.

export type RelayScript = (
  name: 'flow-sweep' | 'flow-child-done',
  group: number,
  args: (string | number | Buffer)[],
) => Promise<unknown>;

/** Most outbox entries one round reads; most ended parents it looks at. */
const READ = 200;
const TRIM = 50;

/** What one round did. */
export interface RelayRound {
  /** outcomes relayed (recorded now or found recorded) */
  relayed: number;
  /** outbox entries cleared */
  cleared: number;
  /** ended parents whose flow data went (flow.trim) */
  trimmed: number;
}

export class FlowRelay {
  readonly #run: RelayScript;
  /** per group: a round under way, and whether another was asked for meanwhile */
  readonly #running = new Map<number, Promise<void>>();
  readonly #again = new Set<number>();
  /** the last error of a kicked round (kicks are not awaited; the sweeps retry) */
  lastError: unknown;

  constructor(run: RelayScript) {
    this.#run = run;
  }

  /** Starts a round for `group` soon, unless one is under way (then one more follows it). */
  kick(group: number): void {
    if (this.#running.has(group)) {
      this.#again.add(group);
      return;
    }
    const round = (async () => {
      do {
        this.#again.delete(group);
        await this.round(group).catch((error: unknown) => {
          this.lastError = error;
        });
      } while (this.#again.has(group));
    })().finally(() => this.#running.delete(group));
    this.#running.set(group, round);
  }

  /** Resolves once no kicked round is under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running.values());
  }

  /** One round for `group`'s outbox (see the top of this file). */
  async round(group: number): Promise<RelayRound> {
    const read = (await this.#run('flow-sweep', group, [READ, TRIM])) as (Buffer | number)[];
    const figures = { relayed: 0, cleared: Number(read[0]), trimmed: Number(read[1]) };
    const byParent = new Map<number, Buffer[]>();
    for (let i = 2; i < read.length; i += 2) {
      const entry = read[i + 1] as Buffer;
      const group = Number(entry.toString('latin1', 0, entry.indexOf(0x3a)));
      byParent.set(group, [...(byParent.get(group) ?? []), read[i] as Buffer, entry]);
    }
    const clear: Buffer[] = [];
    const cascades = new Set<number>();
    await Promise.all(
      [...byParent].map(async ([parentGroup, pairs]) => {
        const args = [pairs.length / 2, ...pairs];
        const statuses = (await this.#run('flow-child-done', parentGroup, args)) as number[];
        statuses.forEach((status, k) => {
          const entry = pairs[2 * k + 1] as Buffer;
          if (status !== 0) figures.relayed++;
          if (status !== 1) clear.push(pairs[2 * k] as Buffer, entry);
          // A mandatory child's death may have killed its parent, whose own parent may live in
          // yet another slot: that outcome now waits in the parent's outbox.
          else if (entry[entry.indexOf(0x0a) + 1] === 0x78) cascades.add(parentGroup);
        });
      }),
    );
    if (clear.length > 0) {
      const reply = (await this.#run('flow-sweep', group, [0, 0, ...clear])) as number[];
      figures.cleared += Number(reply[0]);
    }
    for (const parentGroup of cascades) if (parentGroup !== group) this.kick(parentGroup);
    return figures;
  }
}
