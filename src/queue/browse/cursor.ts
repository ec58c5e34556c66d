// Where a page of queue.list ends: a position in one state's order over all groups. Each group
// reads its sorted sets in their own order (phase, score, member bytes: see lua/list.lua); a
// list over all groups merges them by phase, score, group, member. A cursor names one such
// position, so the next page starts there and costs what its limit costs, at any depth.
import { errors } from '../../base/errors.js';

/** The states `queue.list()` pages through (waiting: flow parents waiting for their children). */
export const LIST_STATES = ['delayed', 'ready', 'active', 'done', 'dead', 'waiting'] as const;
/** One of LIST_STATES: delayed, ready, active, done, dead or waiting. */
export type ListState = (typeof LIST_STATES)[number];

export interface ListPosition {
  /** ready: 0 the ready set, 1 the due entries of the delayed set; other states: 0 */
  phase: number;
  /** the entry's score as Redis wrote it (kept as text: it round-trips exactly) */
  score: string;
  group: number;
  /** the sorted-set member's bytes (the ready set's member carries its due time first) */
  member: Buffer;
}

/** An opaque cursor for the position, in `state`. */
export function encodeListCursor(state: ListState, position: ListPosition): string {
  const { phase, score, group, member } = position;
  const text = JSON.stringify([state, phase, score, group, member.toString('base64')]);
  return Buffer.from(text).toString('base64url');
}

/** The position a cursor names; a clear error for anything else (a cursor of another state too). */
export function decodeListCursor(cursor: unknown, state: ListState, groups: number): ListPosition {
  const bad = (why: string) => errors.invalidOption('cursor', why, cursor);
  const notOurs = () => bad(`is not a cursor from a ${state} page (pass its cursor back)`);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 2048) throw notOurs();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw notOurs();
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) throw notOurs();
  const [from, phase, score, group, member] = parsed as unknown[];
  if (from !== state && LIST_STATES.includes(from as ListState)) {
    throw bad(`is a cursor from a ${String(from)} page, not a ${state} one`);
  }
  if (from !== state || (phase !== 0 && phase !== 1)) throw notOurs();
  if (typeof score !== 'string' || Number.isNaN(scoreValue(score))) throw notOurs();
  if (!Number.isInteger(group) || (group as number) < 0 || (group as number) >= groups) {
    throw bad(`names group ${String(group)}, and this queue has groups 0 to ${groups - 1}`);
  }
  if (typeof member !== 'string') throw notOurs();
  return { phase, score, group: group as number, member: Buffer.from(member, 'base64') };
}

/** A score as Redis writes it ("1733…", "1.5e+12", "inf", "-inf") as a number. */
export function scoreValue(score: string): number {
  if (score === 'inf' || score === '+inf') return Number.POSITIVE_INFINITY;
  if (score === '-inf') return Number.NEGATIVE_INFINITY;
  return score.trim() === '' ? Number.NaN : Number(score);
}

/** The order of a list over all groups: phase, score, group, then member bytes. */
export function comparePositions(a: ListPosition, b: ListPosition): number {
  return (
    a.phase - b.phase ||
    Math.sign(scoreValue(a.score) - scoreValue(b.score)) ||
    a.group - b.group ||
    Buffer.compare(a.member, b.member)
  );
}

/** list.lua's start arguments for `group`: from its first entry, or after `position`. */
export function startArguments(group: number, position: ListPosition | null): (string | Buffer)[] {
  if (!position) return ['first'];
  const side = group < position.group ? '<' : group > position.group ? '>' : '=';
  return ['after', String(position.phase), side, position.score, position.member];
}
