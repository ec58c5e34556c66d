// Where an intake keeps what it is moving. Each launcher has, per source list, a
// holding list in that list's hash slot (LMOVE needs both keys on one node), and
// a counter of the items that left the holding list from its right end. An
// item's id is its holding list's id prefix and its position counted from the
// first item ever held there: items enter on the left and leave on the right,
// so the position never changes while it is held, and an item added again after
// a crash (src/runtime/intake/recovery.ts) is the same message, not a new one.
// A sorted set's holding list (zsetIntake) holds `<due ms>:<member>` items (zset-items.ts).
import calculateSlot from 'cluster-key-slot';
import { errors } from '../../base/errors.js';
import type { ScoreUnit } from '../config.js';

/** One holding list: its keys, whose it is, and where its items go. */
export interface HoldingRef {
  /** the holding list */
  key: string;
  /** its counter: items that left it from the right so far */
  taken: string;
  /** the launcher whose list it is (it says it is alive in the registry) */
  owner: string;
  /** the source list it was filled from */
  list: string;
  /** what every id of its items starts with (kept when another launcher adopts it) */
  idPrefix: string;
  group: number;
  priority: number;
  /** set when the source is a sorted set (zsetIntake): the unit of its scores */
  scoreUnit?: ScoreUnit;
}

/**
 * The hash tag that puts a key in `list`'s slot: the list's own tag when it has one (a key
 * `{high}:x` hashes `high`), else the whole name in braces (a key with no tag hashes its
 * whole name). A name with a `}` but no tag has no such form: it is refused.
 */
export function slotTagOf(list: string): string {
  const open = list.indexOf('{');
  if (open >= 0) {
    const close = list.indexOf('}', open + 1);
    if (close > open + 1) return `{${list.slice(open + 1, close)}}`;
  }
  return `{${list}}`;
}

export function checkListName(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw errors.invalidOption(field, 'must be a non-empty string', value);
  }
  if (calculateSlot(`${slotTagOf(value)}:x`) !== calculateSlot(value)) {
    throw errors.invalidOption(
      field,
      'has a "}" but no hash tag, so no holding list can share its cluster slot; rename it',
      value,
    );
  }
  return value;
}

/** The intake registry: who is alive, and every holding list with its owner. */
export const registryKeys = (prefix: string) => ({
  alive: `{${prefix}:intake}:alive`,
  holding: `{${prefix}:intake}:holding`,
});

/** Launcher ids go into message ids: anything but letters, digits, '.', '_', '-' becomes '_'. */
const idSafe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_');

/** A launcher's own holding list for one source list (`index`: its place in the option). */
export function ownHolding(
  prefix: string,
  owner: string,
  spec: { list: string; group: number; priority: number; index: number },
): HoldingRef {
  const key = `${slotTagOf(spec.list)}:${prefix}:intake:${owner}`;
  const { list, group, priority } = spec;
  const idPrefix = `in:${idSafe(owner)}:${spec.index}:`;
  return { key, taken: `${key}:taken`, owner, list, idPrefix, group, priority };
}

/** A launcher's own holding list for one sorted set (`index`: its place in zsetIntake). */
export function ownZsetHolding(
  prefix: string,
  owner: string,
  spec: { key: string; scoreUnit: ScoreUnit; group: number; priority: number; index: number },
): HoldingRef {
  const key = `${slotTagOf(spec.key)}:${prefix}:intake:${owner}:z${spec.index}`;
  const { group, priority, scoreUnit } = spec;
  const idPrefix = `in:${idSafe(owner)}:z${spec.index}:`;
  return {
    key,
    taken: `${key}:taken`,
    owner,
    list: spec.key,
    idPrefix,
    group,
    priority,
    scoreUnit,
  };
}

/** The list a launcher renames a dead one's holding list to (see intake-adopt.lua). */
export function adoptedHolding(prefix: string, adopter: string, from: HoldingRef): HoldingRef {
  const stamp = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const key = `${slotTagOf(from.list)}:${prefix}:intake:${adopter}:adopted:${stamp}`;
  return { ...from, key, taken: `${key}:taken`, owner: adopter };
}

/** The message id of the item at `position` (length letter, base 36: text order = number order). */
export function itemId(ref: HoldingRef, position: number): string {
  const digits = position.toString(36);
  return `${ref.idPrefix}${String.fromCharCode(96 + digits.length)}${digits}`;
}

/** A registry entry: "<owner>\n<json>" (intake-alive.lua reads the owner before the newline). */
export function entryOf(ref: HoldingRef): string {
  const { list, idPrefix, group, priority, scoreUnit } = ref;
  const fields = { list, idPrefix, group, priority, ...(scoreUnit ? { scoreUnit } : {}) };
  return `${ref.owner}\n${JSON.stringify(fields)}`;
}

/** The HoldingRef a registry entry describes; null when it does not parse. */
export function refOfEntry(key: string, entry: string): HoldingRef | null {
  const cut = entry.indexOf('\n');
  if (cut < 0) return null;
  try {
    const { list, idPrefix, group, priority, scoreUnit } = JSON.parse(entry.slice(cut + 1));
    if (typeof list !== 'string' || typeof idPrefix !== 'string') return null;
    if (!Number.isInteger(group) || !Number.isInteger(priority)) return null;
    if (scoreUnit !== undefined && !['s', 'cs', 'ms'].includes(scoreUnit)) return null;
    return {
      ...(scoreUnit ? { scoreUnit } : {}),
      key,
      taken: `${key}:taken`,
      owner: entry.slice(0, cut),
      list,
      idPrefix,
      group,
      priority,
    };
  } catch {
    return null;
  }
}
