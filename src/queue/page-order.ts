// Which way a page of finished or dead messages reads its state's time order: oldest first, or
// newest first (the default for done and dead, where the latest is what one looks for). A cursor
// carries its page's order, so the next page goes on the same way without being told again.
import { errors } from '../base/errors.js';

const PAGE_ORDERS = ['newest', 'oldest'] as const;
/** Which way a page reads its state's time order: newest first or oldest first. */
export type PageOrder = 'newest' | 'oldest';

export function checkOrder(field: string, value: unknown): PageOrder {
  if (!PAGE_ORDERS.includes(value as PageOrder)) {
    throw errors.invalidOption(field, `must be one of ${PAGE_ORDERS.join(', ')}`, value);
  }
  return value as PageOrder;
}

/**
 * The order a page reads: the one asked for, else the cursor's, else the default. A cursor of
 * the other order is refused: its position means the other side.
 */
export function pageOrder(
  asked: unknown,
  fromCursor: PageOrder | null,
  fallback: PageOrder,
  cursorField: string,
): PageOrder {
  const order = asked === undefined ? (fromCursor ?? fallback) : checkOrder('order', asked);
  if (fromCursor !== null && fromCursor !== order) {
    throw errors.invalidOption(
      cursorField,
      `is the cursor of a page read ${fromCursor} first, and this page reads ${order} first`,
    );
  }
  return order;
}
