// Where a page of queue.list ends: a position in one state's order over all groups. Each group
// reads its sorted sets in their own order (phase, score, member bytes: see lua/list.lua); a
// list over all groups merges them by phase, score, group, member. A cursor names one such
// position, so the next page starts there and costs what its limit costs, at any depth. A page
// reads that order oldest first or newest first (its reverse); the cursor carries which.
import { errors } from '../../base/errors.js';
import type { PageOrder } from '../page-order.js';

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

/** The order each state's pages read by default: the latest done and dead first. */
export const DEFAULT_ORDER: Record<ListState, PageOrder> = {
  delayed: 'oldest',
  ready: 'oldest',
  active: 'oldest',
  done: 'newest',
  dead: 'newest',
  waiting: 'oldest',
};

/** An opaque cursor for the position, in `state`, on a page read in `order`. */
export function encodeListCursor(
  state: ListState,
  position: ListPosition,
  order: PageOrder,
): string {
  const { phase, score, group, member } = position;
  const text = JSON.stringify([state, phase, score, group, member.toString('base64'), order]);
  return Buffer.from(text).toString('base64url');
}

/**
 * The position a cursor names and its page's order; a clear error for anything else (a cursor
 * of another state too).
 */
export function decodeListCursor(
  cursor: unknown,
  state: ListState,
  groups: number,
): { position: ListPosition; order: PageOrder } {
  const bad = (why: string) => errors.invalidOption('cursor', why, cursor);
  const notOurs = () => bad(`is not a cursor from a ${state} page (pass its cursor back)`);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 2048) throw notOurs();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw notOurs();
  }
  // Cursors made before pages had an order (five parts) were oldest first.
  if (!Array.isArray(parsed) || parsed.length < 5 || parsed.length > 6) throw notOurs();
  const [from, phase, score, group, member, order = 'oldest'] = parsed as unknown[];
  if (from !== state && LIST_STATES.includes(from as ListState)) {
    throw bad(`is a cursor from a ${String(from)} page, not a ${state} one`);
  }
  if (from !== state || (phase !== 0 && phase !== 1)) throw notOurs();
  if (typeof score !== 'string' || Number.isNaN(scoreValue(score))) throw notOurs();
  if (!Number.isInteger(group) || (group as number) < 0 || (group as number) >= groups) {
    throw bad(`names group ${String(group)}, and this queue has groups 0 to ${groups - 1}`);
  }
  if (typeof member !== 'string' || (order !== 'oldest' && order !== 'newest')) throw notOurs();
  const position = { phase, score, group: group as number, member: Buffer.from(member, 'base64') };
  return { position, order };
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

/** comparePositions for a page read in `order` (newest first: its reverse). */
export function comparerOf(order: PageOrder): (a: ListPosition, b: ListPosition) => number {
  return order === 'oldest' ? comparePositions : (a, b) => comparePositions(b, a);
}

/**
 * list.lua's start arguments for `group`: from its first entry in the page's order, or past
 * `position`. The side says where the group sorts against the cursor's group in that order.
 */
export function startArguments(
  group: number,
  position: ListPosition | null,
  order: PageOrder,
): (string | Buffer)[] {
  const newest = order === 'newest';
  if (!position) return [newest ? 'last' : 'first'];
  const before = newest ? group > position.group : group < position.group;
  const side = group === position.group ? '=' : before ? '<' : '>';
  const start = newest ? 'before' : 'after';
  return [start, String(position.phase), side, position.score, position.member];
}
