// Where a page of dead letters ends, so the next page starts there: the letter's time of
// death, group and id, the order a list over all groups follows. A page then costs what its
// limit costs, whatever its depth (an offset made each group read everything before it).
import { errors } from '../base/errors.js';

export interface DeadPosition {
  diedAt: number;
  group: number;
  id: Buffer;
}

/** An opaque cursor for the letter at `position`. */
export function encodeCursor(position: DeadPosition): string {
  const text = JSON.stringify([position.diedAt, position.group, position.id.toString('base64')]);
  return Buffer.from(text).toString('base64url');
}

/** The position a cursor names; a clear error for anything else. */
export function decodeCursor(cursor: unknown, groups: number): DeadPosition {
  const bad = () =>
    errors.invalidOption('after', 'is not a cursor from a dead-letter page (its next)', cursor);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 2048) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw bad();
  const [diedAt, group, id] = parsed as unknown[];
  if (!Number.isSafeInteger(diedAt) || (diedAt as number) < 0) throw bad();
  if (!Number.isInteger(group) || (group as number) < 0 || (group as number) >= groups) throw bad();
  if (typeof id !== 'string' || id.length === 0) throw bad();
  return { diedAt: diedAt as number, group: group as number, id: Buffer.from(id, 'base64') };
}

/** The order of a list over all groups: time of death, then group, then id bytes. */
export function comparePositions(a: DeadPosition, b: DeadPosition): number {
  return a.diedAt - b.diedAt || a.group - b.group || Buffer.compare(a.id, b.id);
}

/** dead-list.lua's start arguments for `group`: after `position`, or from `rank`. */
export function startArguments(group: number, position: DeadPosition | null, rank = 0) {
  if (!position) return ['rank', rank];
  const side = group < position.group ? '<' : group > position.group ? '>' : '=';
  return ['after', position.diedAt, side, position.id];
}
