// Where a schedule lives. An id names one schedule in the whole queue, but its state and
// pending occurrence live in the slot of the group it runs in, which the id alone does not
// tell (a spec may name a group or key). So the id's home group keeps a marker naming that
// group, with a generation (lua/schedule-home.lua). Two slots cannot change in one script
// call: an upsert claims the marker first and writes the state second, under the marker's
// generation. Every marker is released only after its group was fenced at its generation
// (lua/schedule-remove.lua leaves a tombstone), so a writer that was on its way when the
// marker went can no longer write there: at any time one group at most can take a write, and
// there is never a second schedule of one id, whatever runs at once or dies half-way.
// Schedules written before placements (format 7) have no marker; a new claim looks for one
// in the other groups and adopts it.
import type { ScriptName } from '../../redis/scripts.js';
import type { QueueConfig } from '../config.js';
import { homeGroup } from './spec.js';

type Run = (
  name: ScriptName,
  group: number,
  args: (string | number | Buffer)[],
) => Promise<unknown>;

export interface Marker {
  group: number;
  gen: number;
  /** as stored: '<group>:<gen>' */
  text: string;
}

const parse = (text: string): Marker => {
  const [group, gen] = text.split(':');
  return { group: Number(group), gen: Number(gen), text };
};

export class Placement {
  readonly #config: QueueConfig;
  readonly #run: Run;

  constructor(config: QueueConfig, run: Run) {
    this.#config = config;
    this.#run = run;
  }

  /** The id's marker, or null when it has none (no schedule, or one from format 7). */
  async read(id: string): Promise<Marker | null> {
    const text = String(
      await this.#run('schedule-home', homeGroup(this.#config, id), ['read', id]),
    );
    return text === '' ? null : parse(text);
  }

  /** The id's marker; when it has none, a new one for `group` (or a format-7 copy's group). */
  async claim(id: string, group: number): Promise<Marker> {
    const home = homeGroup(this.#config, id);
    const [text, how] = (await this.#run('schedule-home', home, ['claim', id, group])) as string[];
    const marker = parse(text as string);
    if (how !== 'new') return marker;
    const older = await this.#unplacedCopy(id, marker.group);
    if (older === null || !(await this.fence(id, marker))) return marker;
    return this.claim(id, older);
  }

  /** Releases the marker if it is still the id's (a compare and delete). */
  async release(id: string, marker: Marker): Promise<void> {
    await this.#run('schedule-home', homeGroup(this.#config, id), ['release', id, marker.text]);
  }

  /**
   * Ends a placement whose group holds no schedule of the id (its writer died, or is late): no
   * write under it can land any more, and the id is free for a new one. False, changing
   * nothing, when the group holds one (its writer got there first).
   */
  async fence(id: string, marker: Marker): Promise<boolean> {
    const fenced = await this.#run('schedule-remove', marker.group, [id, marker.gen, 'fence']);
    if (fenced !== 1) return false;
    await this.release(id, marker);
    return true;
  }

  /** A group other than `except` holding a state of `id` written before placements. */
  async #unplacedCopy(id: string, except: number): Promise<number | null> {
    const groups = Array.from({ length: this.#config.groups }, (_, g) => g);
    const found = await Promise.all(
      groups.map(async (group) => {
        if (group === except) return false;
        const [text] = (await this.#run('schedule-list', group, [id])) as string[];
        return text !== undefined && !('gen' in JSON.parse(text));
      }),
    );
    const group = found.indexOf(true);
    return group < 0 ? null : group;
  }
}
