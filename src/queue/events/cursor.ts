// Where an events() reader stands in each group's stream, and the text a restarted reader
// passes back as `from`: "<group>:<entry id>[/<events of it seen>]" for each group, joined by
// commas, e.g. "0:1712000000000-0,3:1712000000123-1/40". An entry id alone means that entry
// was seen whole; "/k" that its first k events were (a reader stopped inside a big entry).
import { errors } from '../../base/errors.js';

export interface Position {
  /** the last entry read (its events up to `seen`); '0-0' before the first */
  entry: string;
  /** how many of that entry's events were handed out; null: all of them */
  seen: number | null;
}

export type Positions = Map<number, Position>;

/** `from` as events() takes it. */
export type EventsFrom = 'now' | 'start' | string | Record<string, string>;

const ENTRY_ID = /^\d+-\d+$/;

export function formatCursor(positions: Positions): string {
  return [...positions]
    .sort(([a], [b]) => a - b)
    .map(([group, p]) => `${group}:${p.entry}${p.seen === null ? '' : `/${p.seen}`}`)
    .join(',');
}

function parsePosition(field: string, text: unknown): Position {
  if (typeof text !== 'string') throw errors.invalidOption(field, 'must be a string', text);
  const [entry, seen, ...more] = text.split('/');
  const count = seen === undefined ? null : Number(seen);
  if (
    more.length > 0 ||
    !ENTRY_ID.test(entry ?? '') ||
    (count !== null && !(Number.isInteger(count) && count >= 0))
  ) {
    throw errors.invalidOption(field, 'must be a stream entry id like 1712000000000-0', text);
  }
  return { entry: entry as string, seen: count };
}

/**
 * The positions `from` names, for the groups read: null for a group it does not name (it
 * starts at 'now' or 'start' then, as `from` says, and from now when `from` is a cursor).
 */
export function parseFrom(
  from: unknown,
  groups: readonly number[],
): { positions: Positions; others: 'now' | 'start' } {
  const positions: Positions = new Map();
  if (from === undefined || from === 'now') return { positions, others: 'now' };
  if (from === 'start') return { positions, others: 'start' };
  let entries: [string, unknown][];
  if (typeof from === 'string') {
    entries = from.split(',').map((part) => {
      const colon = part.indexOf(':');
      if (colon < 0) {
        throw errors.invalidOption(
          'from',
          "must be 'now', 'start' or a cursor like 0:1712000000000-0,1:…",
          from,
        );
      }
      return [part.slice(0, colon), part.slice(colon + 1)];
    });
  } else if (typeof from === 'object' && from !== null && !Array.isArray(from)) {
    entries = Object.entries(from);
  } else {
    throw errors.invalidOption(
      'from',
      "must be 'now', 'start', a cursor or { group: entry id }",
      from,
    );
  }
  for (const [key, value] of entries) {
    const group = Number(key);
    if (!Number.isInteger(group) || group < 0) {
      throw errors.invalidOption('from', `names group "${key}", not a group number`, from);
    }
    if (groups.includes(group)) positions.set(group, parsePosition(`from[${key}]`, value));
  }
  return { positions, others: 'now' };
}
