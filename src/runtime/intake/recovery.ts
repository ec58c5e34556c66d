// Nothing an intake held is lost when its launcher dies. Each launcher beats every
// second in `{<prefix>:intake}:alive` and keeps its holding lists registered in
// `{<prefix>:intake}:holding`; a launcher that has not beaten for `deadAfterMs` is
// dead, and any other launcher adopts its holding lists (intake-adopt.lua renames
// each, so only one adopter gets it) and adds their items under the ids their
// positions gave them: items the dead one had added already are still pending and
// are not added twice; only those it had added and that ran since run again.
import type { Logger } from 'pino';
import {
  adoptedHolding,
  entryOf,
  type HoldingRef,
  refOfEntry,
  registryKeys,
} from '../../queue/intake/holding.js';
import { hand, take } from '../../queue/intake/transfer.js';
import type { Queue } from '../../queue/queue.js';
import type { IntakeScripts } from '../../redis/intake-scripts.js';

export class IntakeRegistry {
  readonly #queue: Queue;
  readonly #scripts: IntakeScripts;
  readonly #keys: { alive: string; holding: string };
  readonly #launcherId: string;
  readonly #deadAfterMs: number;

  constructor(queue: Queue, scripts: IntakeScripts, launcherId: string, deadAfterMs: number) {
    this.#queue = queue;
    this.#scripts = scripts;
    this.#keys = registryKeys(queue.config.prefix);
    this.#launcherId = launcherId;
    this.#deadAfterMs = deadAfterMs;
  }

  /** Beats, registers `own`, and returns the holding lists of dead launchers. */
  async beat(own: HoldingRef[]): Promise<HoldingRef[]> {
    const args: string[] = [this.#launcherId, String(this.#deadAfterMs)];
    for (const ref of own) args.push(ref.key, entryOf(ref));
    const keys = [this.#keys.alive, this.#keys.holding];
    const reply = (await this.#scripts.run('alive', keys, args)) as string[];
    const dead: HoldingRef[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      const ref = refOfEntry(reply[i] as string, reply[i + 1] as string);
      if (ref) dead.push(ref);
      else await this.#queue.client.hdel(this.#keys.holding, reply[i] as string);
    }
    return dead;
  }

  /** Registers a holding list of this launcher's (an adopted one), behind the format guard. */
  register(ref: HoldingRef): Promise<unknown> {
    const keys = [this.#keys.alive, this.#keys.holding];
    const args = [this.#launcherId, String(this.#deadAfterMs), ref.key, entryOf(ref)];
    return this.#scripts.run('alive', keys, args);
  }

  unregister(ref: HoldingRef): Promise<unknown> {
    return this.#queue.client.hdel(this.#keys.holding, ref.key);
  }

  /** This launcher holds nothing any more: it leaves the registry. */
  leave(): Promise<unknown> {
    return this.#queue.client.zrem(this.#keys.alive, this.#launcherId);
  }
}

/** Most items read from a holding list per step. */
const DRAIN_BATCH = 200;

/**
 * Adds everything a holding list holds, oldest first, and removes the emptied list (and its
 * registration). Returns how many items went in; throws when Redis does, leaving the rest.
 */
export async function drainHolding(
  queue: Queue,
  scripts: IntakeScripts,
  registry: IntakeRegistry,
  ref: HoldingRef,
): Promise<number> {
  let moved = 0;
  for (;;) {
    const taken = await take(queue, ref, null, 0, DRAIN_BATCH);
    if (taken.items.length === 0) break;
    if (!(await hand(queue, scripts, ref, taken))) break; // adopted by another launcher
    moved += taken.items.length;
  }
  if ((await scripts.run('close', [ref.key, ref.taken], [])) === 1) await registry.unregister(ref);
  return moved;
}

/** Adopts and drains each dead launcher's holding list; returns how many items went in. */
export async function recoverDead(
  queue: Queue,
  scripts: IntakeScripts,
  registry: IntakeRegistry,
  adopter: string,
  dead: HoldingRef[],
  log: Logger,
): Promise<number> {
  let recovered = 0;
  for (const from of dead) {
    const to = adoptedHolding(queue.config.prefix, adopter, from);
    // Registered before it exists: should this launcher die mid-way, the next one adopts it.
    await registry.register(to);
    const held = (await scripts.run(
      'adopt',
      [from.key, from.taken, to.key, to.taken],
      [],
    )) as number;
    await registry.unregister(from);
    if (held < 0) {
      await registry.unregister(to);
      continue;
    }
    const moved = await drainHolding(queue, scripts, registry, to);
    recovered += moved;
    const { list, owner } = from;
    log.warn(
      { event: 'intake-recovered', list, from: owner, held, moved },
      `intake: ${moved} items of list ${list} recovered from launcher ${owner}`,
    );
  }
  return recovered;
}
