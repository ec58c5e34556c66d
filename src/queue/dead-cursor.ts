// Where a page of dead letters ends, so the next page starts there: the letter's time of
// death, group and id, the order a list over all groups follows (or its reverse, newest first).
// A page then costs what its limit costs, whatever its depth (an offset made each group read
// everything before it). The cursor carries its page's order.
import { errors } from '../base/errors.js';
import type { PageOrder } from './page-order.js';

export interface DeadPosition {
  diedAt: number;
  group: number;
  id: Buffer;
}

/** An opaque cursor for the letter at `position`, on a page read in `order`. */
export function encodeCursor(position: DeadPosition, order: PageOrder): string {
  const id = position.id.toString('base64');
  const text = JSON.stringify([position.diedAt, position.group, id, order]);
  return Buffer.from(text).toString('base64url');
}

/** The position a cursor names and its page's order; a clear error for anything else. */
export function decodeCursor(
  cursor: unknown,
  groups: number,
): { position: DeadPosition; order: PageOrder } {
  const bad = () =>
    errors.invalidOption('after', 'is not a cursor from a dead-letter page (its next)', cursor);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 2048) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw bad();
  }
  // Cursors made before pages had an order (three parts) were oldest first.
  if (!Array.isArray(parsed) || parsed.length < 3 || parsed.length > 4) throw bad();
  const [diedAt, group, id, order = 'oldest'] = parsed as unknown[];
  if (!Number.isSafeInteger(diedAt) || (diedAt as number) < 0) throw bad();
  if (!Number.isInteger(group) || (group as number) < 0 || (group as number) >= groups) throw bad();
  if (typeof id !== 'string' || id.length === 0) throw bad();
  if (order !== 'oldest' && order !== 'newest') throw bad();
  const position = {
    diedAt: diedAt as number,
    group: group as number,
    id: Buffer.from(id, 'base64'),
  };
  return { position, order };
}

/** The order of a list over all groups: time of death, then group, then id bytes. */
export function comparePositions(a: DeadPosition, b: DeadPosition): number {
  return a.diedAt - b.diedAt || a.group - b.group || Buffer.compare(a.id, b.id);
}

/** comparePositions for a page read in `order` (newest first: its reverse). */
export function comparerOf(order: PageOrder): (a: DeadPosition, b: DeadPosition) => number {
  return order === 'oldest' ? comparePositions : (a, b) => comparePositions(b, a);
}

/**
 * dead-list.lua's start arguments for `group`: past `position`, or from `rank` (an offset from
 * the page's first end). The side says where the group sorts against the cursor's group in the
 * page's order.
 */
export function startArguments(
  group: number,
  position: DeadPosition | null,
  order: PageOrder,
  rank = 0,
) {
  const newest = order === 'newest';
  if (!position) return [newest ? 'revrank' : 'rank', rank];
  const before = newest ? group > position.group : group < position.group;
  const side = group === position.group ? '=' : before ? '<' : '>';
  return [newest ? 'before' : 'after', position.diedAt, side, position.id];
}
