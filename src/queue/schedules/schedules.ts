// queue.schedules: periodic schedules whose occurrences are ordinary messages. A schedule's
// state and its pending occurrence live in one group's slot and change together in one script
// call (lua/schedule-*.lua): upserts of the same spec change nothing, a new spec replaces the
// waiting occurrence, and the consumer that gets occurrence N adds N+1 by compare-and-set, so
// there is exactly one message per occurrence whatever runs at once. No leader, no lock.
// An id names one schedule in the whole queue: placement.ts keeps which group it lives in.
// An upsert plans the change from the state it read (change.ts) and writes it only if that
// state is still there (compare and set), else it reads and plans again.
import { errors } from '../../base/errors.js';
import type { ScriptName } from '../../redis/scripts.js';
import type { QueueConfig } from '../config.js';
import type { Message } from '../message.js';
import { planChange } from './change.js';
import { step } from './next.js';
import { Placement } from './placement.js';
import { type PreviewOptions, previewOf } from './preview.js';
import {
  type CheckedSpec,
  checkScheduleId,
  checkSpec,
  homeGroup,
  type ScheduleSpec,
  type ScheduleState,
} from './spec.js';
import { templateOf, withBody } from './template.js';

export type { PreviewOptions } from './preview.js';
export type { ScheduleSpec, ScheduleState } from './spec.js';

type Run = (
  name: ScriptName,
  group: number,
  args: (string | number | Buffer)[],
  buffers?: boolean,
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
  /** this consumer advanced past grid times that passed with no launcher: it runs the catch-up */
  catchUp?: true;
}

/**
 * A repair looks only at occurrences due at least this long ago: one due just now is most
 * likely with its consumer, about to advance it (the script checks anyway).
 */
const REPAIR_AFTER_MS = 1000;
/** Tries of one upsert against consumers and other upserters changing the same schedule. */
const MAX_ATTEMPTS = 50;

/** A queue's periodic schedules (`queue.schedules`): upsert, get, list, remove. */
export class Schedules {
  readonly #parts: ScheduleParts;
  readonly #placement: Placement;

  /** @internal made by the Queue */
  constructor(parts: ScheduleParts) {
    this.#parts = parts;
    this.#placement = new Placement(parts.config, parts.run);
  }

  /**
   * Creates or changes a schedule; returns it with its next due time (`next`). A spec that
   * names no group or key keeps the schedule in its group; one that names another group than
   * the schedule's is refused (remove it, then upsert it: an id names one schedule).
   */
  async upsert(id: string, spec: ScheduleSpec): Promise<ScheduleState> {
    const checkedId = checkScheduleId(id);
    const checked = checkSpec(this.#parts.config, checkedId, spec);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const marker = await this.#placement.claim(checkedId, checked.state.group);
      const target = checked.target;
      if (target && target.group !== marker.group) {
        // Unless its group holds nothing (the writer died, or is late), it lives there.
        if (await this.#placement.fence(checkedId, marker)) continue;
        const where = `schedule ${checkedId} lives in group ${marker.group}`;
        const how = 'to move it, remove it and upsert it again';
        throw errors.invalidOption(target.field, `${where}; ${how}`, target.value);
      }
      const written = await this.#write(checkedId, checked, marker.group, marker.gen);
      if (written === 'fenced') await this.#placement.release(checkedId, marker);
      else if (written !== 'changed') return written;
    }
    throw errors.redis(
      `schedule ${checkedId}: changed by others ${MAX_ATTEMPTS} times while this upsert planned; try again`,
    );
  }

  /** One try: plans from the state as read, and writes if nothing changed it meanwhile. */
  async #write(
    id: string,
    checked: CheckedSpec,
    group: number,
    gen: number,
  ): Promise<ScheduleState | 'changed' | 'fenced'> {
    const { config, run, now } = this.#parts;
    const spec = { ...checked.state, group };
    const { head, tail, digest, record } = templateOf(checked, spec);
    const oldText = await this.#stateText(group, id);
    const old = oldText ? (JSON.parse(oldText) as ScheduleState) : null;
    if (old?.digest === digest) return withBody(old, record);
    const plan = planChange(old, spec, Math.round(await now(group)));
    const { anchor: _, ...fields } = spec;
    const [outcome, text] = (await run('schedule-upsert', group, [
      config.unitMs,
      id,
      digest,
      JSON.stringify({ ...fields, digest }),
      head,
      tail,
      gen,
      oldText ?? '',
      plan.replaced.anchor,
      plan.replaced.next ?? '',
      plan.running.anchor,
      plan.running.next ?? '',
      spec.priority,
    ])) as [string, string];
    if (outcome === 'changed' || outcome === 'fenced') return outcome;
    return withBody(JSON.parse(text) as ScheduleState, record);
  }

  async #stateText(group: number, id: string): Promise<string | undefined> {
    const [text] = (await this.#parts.run('schedule-list', group, [id])) as string[];
    return text;
  }

  /** The states of a group's schedules (or of one), each with its occurrences' body. */
  async #read(group: number, id: string): Promise<ScheduleState[]> {
    const reply = (await this.#parts.run(
      'schedule-list',
      group,
      [id, 'records'],
      true,
    )) as Buffer[];
    const out: ScheduleState[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      out.push(withBody(JSON.parse(String(reply[i])) as ScheduleState, reply[i + 1] as Buffer));
    }
    return out;
  }

  /** The schedule with its body, or null. */
  async get(id: string): Promise<ScheduleState | null> {
    const checkedId = checkScheduleId(id);
    const marker = await this.#placement.read(checkedId);
    const [placed] = marker ? await this.#read(marker.group, checkedId) : [];
    if (placed) return placed;
    // One written before placements (format 7) has no marker: the home group first.
    for (const group of this.#groupsOf(checkedId)) {
      const [found] = await this.#read(group, checkedId);
      if (found) return found;
    }
    return null;
  }

  /**
   * The next `count` run times (default 10, epoch ms) of a stored schedule (its id) or of a
   * spec, from `from` on (default now, on Redis's clock). Writes nothing.
   */
  async preview(what: string | ScheduleSpec, options?: PreviewOptions): Promise<number[]> {
    const { config, now } = this.#parts;
    if (typeof what === 'string') {
      const state = await this.get(what);
      if (!state) throw errors.invalidOption('id', 'names no schedule', what);
      return previewOf(state, options, () => now(state.group));
    }
    const checked = checkSpec(config, 'preview', what);
    return previewOf(checked.state, options, () => now(checked.state.group));
  }

  /** Every schedule, by id, each with its body. */
  async list(): Promise<ScheduleState[]> {
    const groups = Array.from({ length: this.#parts.config.groups }, (_, g) => g);
    const replies = await Promise.all(groups.map((g) => this.#read(g, '')));
    return replies.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Removes a schedule and its waiting occurrence, wherever it is; false when there was none. */
  async remove(id: string): Promise<boolean> {
    const checkedId = checkScheduleId(id);
    const { run, config } = this.#parts;
    const marker = await this.#placement.read(checkedId);
    const placed = marker
      ? (await run('schedule-remove', marker.group, [checkedId, marker.gen])) === 1
      : false;
    // Copies written before placements (format 7), in any group.
    const groups = Array.from({ length: config.groups }, (_, g) => g);
    const unplaced = await Promise.all(
      groups.map((g) => run('schedule-remove', g, [checkedId, ''])),
    );
    if (marker) await this.#placement.release(checkedId, marker);
    return placed || unplaced.includes(1);
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
    if (outcome === 'advanced' && planned.run && planned.missed) {
      return { run: true, outcome, catchUp: true };
    }
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
    const home = homeGroup(this.#parts.config, id);
    return [home, ...Array.from({ length: groups }, (_, g) => g).filter((g) => g !== home)];
  }
}
