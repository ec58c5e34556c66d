// What `intake` accepts: the classic LPUSH/BRPOP lists skyq moves into its groups,
// earliest first. Every list goes to the first list's group (its name hashed, or the one
// given for it) unless given a group of its own: a group leases by priority, and a list's
// position is its priority unless given, so within a group an earlier list's items go
// first, as `BRPOP high normal low` takes them. (Earlier releases hashed each list's own
// name; a holding list keeps the group it was registered with: see holding.ts.)
import { errors } from '../../base/errors.js';
import { hashString } from '../../base/keys.js';
import { checkGroup, checkInteger, MAX_PRIORITY } from '../options.js';
import { checkListName } from './holding.js';
import { refuseOwnKey } from './own-keys.js';

/** One list an intake moves into skyq (startActors' `intake` option), with where its items go. */
export interface IntakeListOption {
  /** the Redis list producers LPUSH onto */
  list: string;
  /** the group its items go to (default: the first list's group; the first: its name hashed) */
  group?: number;
  /** their priority (default: the list's position, 0 for the first) */
  priority?: number;
}

/** One list, checked: where its items go and how they rank. */
export interface IntakeSpec {
  /** the Redis list producers LPUSH onto */
  list: string;
  /** the group its items go to */
  group: number;
  /** their priority */
  priority: number;
  /** its position in the option: part of its items' ids */
  index: number;
}

/** Most lists one intake reads: each has its own blocking connection. */
const MAX_LISTS = 32;

/** Checks the option against the queue's groups and prefix (whose own keys it may not name). */
export function checkIntake(value: unknown, groups: number, prefix: string): IntakeSpec[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw errors.invalidOption('intake', 'must be an array of list names or { list, group }');
  }
  if (value.length > MAX_LISTS) {
    throw errors.invalidOption('intake', `names ${value.length} lists, at most ${MAX_LISTS}`);
  }
  const seen = new Set<string>();
  let shared: number | undefined; // the first list's group: the others' default
  return value.map((entry: unknown, index): IntakeSpec => {
    const field = `intake[${index}]`;
    const option = typeof entry === 'string' ? { list: entry } : entry;
    if (typeof option !== 'object' || option === null) {
      throw errors.invalidOption(field, 'must be a list name or { list, group, priority }');
    }
    const { list, group, priority, ...rest } = option as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined)
      throw errors.invalidOption(`${field}.${unknown}`, 'is not an option');
    const name = checkListName(`${field}.list`, list);
    if (seen.has(name)) throw errors.invalidOption(`${field}.list`, 'is named twice', name);
    seen.add(name);
    refuseOwnKey(`${field}.list`, prefix, name);
    const own = group === undefined ? undefined : checkGroup(`${field}.group`, group, groups);
    shared ??= own ?? hashString(name) % groups;
    return {
      list: name,
      group: own ?? shared,
      priority:
        priority === undefined
          ? Math.min(index, MAX_PRIORITY)
          : checkInteger(`${field}.priority`, priority, 0, MAX_PRIORITY),
      index,
    };
  });
}
