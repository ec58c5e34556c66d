// The job browser's read side: GET /api/list?state=…&group=…&prefix=…&cursor=…&limit=…&order=…
// answers one page of queue.list with the tab counts. Its actions are the existing job and
// dead-letter routes (actions.ts: reschedule to now, cancel, retry), under the same policy as
// every POST. Any other query parameter is a 400 naming it (params.ts).
import { errors } from '../base/errors.js';
import { LIST_STATES, type ListState } from '../queue/browse/cursor.js';
import { checkOrder } from '../queue/page-order.js';
import type { ApiContext } from './api.js';
import { textParam, wholeNumber } from './params.js';
import { json, type Reply, type Route } from './server.js';

const QUERY = ['state', 'group', 'limit', 'cursor', 'prefix', 'order'];

export function listRoutes({ queue }: ApiContext): Route[] {
  return [
    { method: 'GET', path: '/api/list', query: QUERY, handle: ({ url }) => listPage(queue, url) },
  ];
}

async function listPage(queue: ApiContext['queue'], url: URL): Promise<Reply> {
  const state = url.searchParams.get('state') ?? 'delayed';
  if (!LIST_STATES.includes(state as ListState)) {
    throw errors.invalidOption('state', `must be one of ${LIST_STATES.join(', ')}`, state);
  }
  const group = wholeNumber(url, 'group');
  const limit = wholeNumber(url, 'limit') ?? 25;
  const cursor = textParam(url, 'cursor');
  const prefix = textParam(url, 'prefix');
  const order = textParam(url, 'order');
  const [page, counts] = await Promise.all([
    queue.list(state as ListState, {
      ...(group === undefined ? {} : { group }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(prefix === undefined ? {} : { prefix }),
      ...(order === undefined ? {} : { order: checkOrder('order', order) }),
      limit,
    }),
    queue.listCounts(group),
  ]);
  return json({
    state,
    counts,
    cursor: page.cursor,
    // An id that is not UTF-8 shows escaped; actions need its bytes back.
    items: page.items.map(({ idBytes, ...item }) => ({
      ...item,
      ...(idBytes ? { idBase64: idBytes.toString('base64') } : {}),
    })),
  });
}
