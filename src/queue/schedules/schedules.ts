// queue.schedules: periodic schedules whose occurrences are ordinary messages. A schedule's
// state and its pending occurrence live in one group's slot and change together in one script
// call (lua/schedule-*.lua): upserts of the same spec change nothing, a new spec replaces the
// waiting occurrence, and the consumer that gets occurrence N adds N+1 by compare-and-set, so
// there is exactly one message per occurrence whatever runs at once. No leader, no lock.
import { createHash } from 'node:crypto';
import { errors } from '../../base/errors.js';
import { hashString } from '../../base/keys.js';
import type { ScriptName } from '../../redis/scripts.js';
import type { QueueConfig } from '../config.js';
import type { Message } from '../message.js';
import { headerOf, tagsOf } from '../record.js';
import { firstOccurrence, step } from './next.js';
import { checkScheduleId, checkSpec, type ScheduleSpec, type ScheduleState } from './spec.js';

export type { ScheduleSpec, ScheduleState } from './spec.js';

type Run = (
  name: ScriptName,
  group: number,
  args: (string | number | Buffer)[],
) => Promise<unknown>;

export interface ScheduleParts {
  config: QueueConfig;
  run: Run;
  /** Redis ms now, for the group's server */
  now(group: number): Promise<number>;
}

/** What a consumer does with an occurrence it got (see Jobs). */
export interface Advance {
  run: boolean;
  outcome: 'advanced' | 'stale' | 'gone' | 'pending';
}

/**
 * A repair looks only at occurrences due at least this long ago: one due just now is most
 * likely with its consumer, about to advance it (the script checks anyway).
 */
const REPAIR_AFTER_MS = 1000;

/** A queue's periodic schedules (`queue.schedules`): upsert, get, list, remove. */
export class Schedules {
  readonly #parts: ScheduleParts;

  /** @internal made by the Queue */
  constructor(parts: ScheduleParts) {
    this.#parts = parts;
  }

  /** Creates or changes a schedule; returns it with its next due time (`next`). */
  async upsert(id: string, spec: ScheduleSpec): Promise<ScheduleState> {
    const { config, run, now } = this.#parts;
    const checkedId = checkScheduleId(id);
    const checked = checkSpec(config, checkedId, spec);
    const header = headerOf({
      enqueuedAt: null,
      priority: checked.state.priority,
      maxAttempts: checked.maxAttempts,
      backoff: checked.backoff,
    });
    const head = header + tagsOf({ name: checked.state.name });
    const tail =
      typeof checked.body.data === 'string'
        ? `${checked.body.kind}${checked.body.data}`
        : Buffer.concat([Buffer.from(checked.body.kind), checked.body.data]);
    const group = checked.state.group;
    const current = Math.round(await now(group));
    const digest = createHash('sha256')
      .update(JSON.stringify({ ...checked.state, anchor: checked.state.startAt ?? null }))
      .update(head)
      .update(tail)
      .digest('base64url')
      .slice(0, 22);
    const state = { ...checked.state, digest, anchor: checked.state.anchor ?? current };
    const next = firstOccurrence(state, current);
    const reply = await run('schedule-upsert', group, [
      config.unitMs,
      checkedId,
      digest,
      JSON.stringify(state),
      head,
      tail,
      next === null ? '' : next,
      state.priority,
    ]);
    return JSON.parse(String(reply)) as ScheduleState;
  }

  /** One schedule with its next due time, last run and count; null when there is none. */
  async get(id: string): Promise<ScheduleState | null> {
    const checkedId = checkScheduleId(id);
    for (const group of this.#groupsOf(checkedId)) {
      const [text] = (await this.#parts.run('schedule-list', group, [checkedId])) as string[];
      if (text) return JSON.parse(text) as ScheduleState;
    }
    return null;
  }

  /** Every schedule, by id. */
  async list(): Promise<ScheduleState[]> {
    const groups = Array.from({ length: this.#parts.config.groups }, (_, g) => g);
    const replies = await Promise.all(
      groups.map((g) => this.#parts.run('schedule-list', g, ['']) as Promise<string[]>),
    );
    return replies
      .flat()
      .map((text) => JSON.parse(text) as ScheduleState)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Removes a schedule and its waiting occurrence; false when there was none. */
  async remove(id: string): Promise<boolean> {
    const checkedId = checkScheduleId(id);
    for (const group of this.#groupsOf(checkedId)) {
      if ((await this.#parts.run('schedule-remove', group, [checkedId])) === 1) return true;
    }
    return false;
  }

  /**
   * @internal
   * A consumer got an occurrence (`message.schedule`): adds the next one unless another
   * consumer did, and says whether to run this one (missed: 'skip' lets a stale one go).
   */
  async advance(message: Message): Promise<Advance> {
    const tag = message.schedule;
    if (!tag) throw errors.invalidOption('message', 'is not a schedule occurrence');
    const { config, run, now } = this.#parts;
    const [text] = (await run('schedule-list', message.group, [tag.id])) as string[];
    if (!text) return { run: true, outcome: 'gone' };
    const state = JSON.parse(text) as ScheduleState;
    if (state.next !== tag.at) return { run: true, outcome: 'stale' };
    const planned = step(state, tag.at, Math.round(await now(message.group)));
    const [outcome] = (await run('schedule-advance', message.group, [
      config.unitMs,
      tag.id,
      tag.at,
      state.digest,
      planned.next === null ? '' : planned.next,
      state.priority,
    ])) as [Advance['outcome'], string];
    return { run: outcome !== 'advanced' || planned.run, outcome };
  }

  /**
   * @internal
   * Schedules of `group` whose pending occurrence is gone without having advanced them (it
   * became a dead letter by lease expiry before it started, or was cancelled): each gets its
   * next occurrence, by the same compare-and-set as advance(), so exactly once whoever
   * repairs at the same time. Returns the ids repaired.
   */
  async repair(group: number): Promise<string[]> {
    const { config, run, now } = this.#parts;
    const texts = (await run('schedule-list', group, [''])) as string[];
    if (texts.length === 0) return [];
    const current = Math.round(await now(group));
    const repaired: string[] = [];
    for (const text of texts) {
      const state = JSON.parse(text) as ScheduleState;
      if (typeof state.next !== 'number' || state.next > current - REPAIR_AFTER_MS) continue;
      const planned = step(state, state.next, current);
      const [outcome] = (await run('schedule-advance', group, [
        config.unitMs,
        state.id,
        state.next,
        state.digest,
        planned.next === null ? '' : planned.next,
        state.priority,
        'orphan',
      ])) as [Advance['outcome'], string];
      if (outcome === 'advanced') repaired.push(state.id);
    }
    return repaired;
  }

  /** The id's home group first (where a schedule without group or key lives), then the rest. */
  #groupsOf(id: string): number[] {
    const { groups } = this.#parts.config;
    const home = hashString(`schedule:${id}`) % groups;
    return [home, ...Array.from({ length: groups }, (_, g) => g).filter((g) => g !== home)];
  }
}
