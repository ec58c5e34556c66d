// `skyq dlq … --ids a,b`: the ids as a list, and `dlq list --ids`, which shows just those dead
// letters (each read with get(), as a handful named by hand are) instead of a page of them all.
import { errors } from '../base/errors.js';
import type { DeadLetter } from '../queue/dead-letters.js';
import { checkOrder } from '../queue/page-order.js';
import type { Queue } from '../queue/queue.js';

/**
 * "a,b" as ids. An empty one is refused: `--ids ''` (an unset variable) was taken for no
 * selection, and retried or purged every dead letter.
 */
export function idsOf(text: string): string[] {
  const ids = text.split(',');
  if (ids.some((id) => id === '')) {
    throw errors.invalidOption('ids', 'must be ids, comma separated, none of them empty', text);
  }
  return ids;
}

/** The dead letters among `ids` (in `group` only, when given), in `order`, and the ids that were none. */
export async function deadByIds(
  queue: Queue,
  ids: string[],
  group: number | undefined,
  order: string | undefined,
): Promise<{ letters: DeadLetter[]; notFound: string[] }> {
  const sign = order === undefined || checkOrder('order', order) === 'newest' ? -1 : 1;
  const unique = [...new Set(ids)];
  const where = group === undefined ? undefined : { group };
  const found = await Promise.all(unique.map((id) => queue.get(id, where)));
  const letters: DeadLetter[] = [];
  const notFound: string[] = [];
  for (const [i, info] of found.entries()) {
    if (info?.state !== 'dead') {
      notFound.push(unique[i] as string);
      continue;
    }
    letters.push({
      id: info.id,
      group: info.group,
      diedAt: info.diedAt ?? 0,
      reason: info.deadReason ?? '',
      lastError: info.lastError,
      attempts: info.attempts,
      body: info.body,
      ...(info.name === undefined ? {} : { name: info.name }),
    });
  }
  // A page's order: time of death, then group, then id.
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  letters.sort((a, b) => sign * (a.diedAt - b.diedAt || a.group - b.group || byId(a.id, b.id)));
  return { letters, notFound };
}
