// What `zsetIntake` accepts: sorted sets other programs use as their delay queue
// (`ZADD JOB_MESSAGE_QUEUE <unix seconds> <json>`, `ZADD seta <epoch ms> <member>`),
// consumed where they lie. Each key names the unit of its scores; its members go to one
// group (the key's name hashed, unless given) when they fall due on Redis's clock.
import { errors } from '../../base/errors.js';
import { hashString } from '../../base/keys.js';
import { type ScoreUnit, UNIT_MS } from '../config.js';
import { checkGroup, checkInteger, MAX_PRIORITY } from '../options.js';
import { checkListName } from './holding.js';
import { refuseOwnKey } from './own-keys.js';

/** One sorted set of `zsetIntake`: its name and the unit of its scores. */
export interface ZsetIntakeOption {
  /** the sorted set other programs ZADD to */
  key: string;
  /** what its scores count: seconds, centiseconds or milliseconds since the epoch */
  scoreUnit: ScoreUnit;
  /** the group its members go to (default: its name hashed) */
  group?: number;
  /** their priority (default 0) */
  priority?: number;
}

/** One sorted set, checked. */
export interface ZsetIntakeSpec {
  /** the sorted set */
  key: string;
  /** what its scores count */
  scoreUnit: ScoreUnit;
  /** ms per score unit */
  unitMs: number;
  /** the group its members go to */
  group: number;
  /** their priority */
  priority: number;
  /** its position in the option: part of its members' ids */
  index: number;
}

/** Most sorted sets one launcher consumes (each is one more read in the watcher's calls). */
const MAX_KEYS = 32;

/**
 * Checks the option against the queue's groups and prefix. `lists`: the list intake's source
 * lists, which no key may repeat (a key is one type; naming it twice is a mistake).
 */
export function checkZsetIntake(
  value: unknown,
  groups: number,
  prefix: string,
  lists: readonly string[] = [],
): ZsetIntakeSpec[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw errors.invalidOption('zsetIntake', 'must be an array of { key, scoreUnit }');
  }
  if (value.length > MAX_KEYS) {
    throw errors.invalidOption('zsetIntake', `names ${value.length} keys, at most ${MAX_KEYS}`);
  }
  const seen = new Set<string>(lists);
  return value.map((entry: unknown, index): ZsetIntakeSpec => {
    const field = `zsetIntake[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw errors.invalidOption(field, "must be { key, scoreUnit: 's' | 'cs' | 'ms' }", entry);
    }
    const { key, scoreUnit, group, priority, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined)
      throw errors.invalidOption(`${field}.${unknown}`, 'is not an option');
    const name = checkListName(`${field}.key`, key);
    if (seen.has(name)) throw errors.invalidOption(`${field}.key`, 'is named twice', name);
    seen.add(name);
    refuseOwnKey(`${field}.key`, prefix, name);
    if (scoreUnit !== 's' && scoreUnit !== 'cs' && scoreUnit !== 'ms') {
      throw errors.invalidOption(`${field}.scoreUnit`, "must be 's', 'cs' or 'ms'", scoreUnit);
    }
    return {
      key: name,
      scoreUnit,
      unitMs: UNIT_MS[scoreUnit],
      group:
        group === undefined
          ? hashString(name) % groups
          : checkGroup(`${field}.group`, group, groups),
      priority:
        priority === undefined ? 0 : checkInteger(`${field}.priority`, priority, 0, MAX_PRIORITY),
      index,
    };
  });
}
