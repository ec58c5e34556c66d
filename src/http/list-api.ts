// The job browser's read side: GET /api/list?state=…&group=…&prefix=…&cursor=…&limit=… answers
// one page of queue.list with the tab counts. Its actions are the existing job and dead-letter
// routes (actions.ts: reschedule to now, cancel, retry), under the same policy as every POST.
import { errors } from '../base/errors.js';
import { LIST_STATES, type ListState } from '../queue/browse/cursor.js';
import type { ApiContext } from './api.js';
import { json, type Reply, type Route } from './server.js';

export function listRoutes({ queue }: ApiContext): Route[] {
  return [{ method: 'GET', path: '/api/list', handle: ({ url }) => listPage(queue, url) }];
}

async function listPage(queue: ApiContext['queue'], url: URL): Promise<Reply> {
  const state = url.searchParams.get('state') ?? 'delayed';
  if (!LIST_STATES.includes(state as ListState)) {
    throw errors.invalidOption('state', `must be one of ${LIST_STATES.join(', ')}`, state);
  }
  const group = wholeNumber(url, 'group');
  const limit = wholeNumber(url, 'limit') ?? 25;
  const cursor = url.searchParams.get('cursor') || undefined;
  const prefix = url.searchParams.get('prefix') || undefined;
  const [page, counts] = await Promise.all([
    queue.list(state as ListState, {
      ...(group === undefined ? {} : { group }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(prefix === undefined ? {} : { prefix }),
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

function wholeNumber(url: URL, name: string): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return undefined;
  if (!/^\d+$/.test(text)) throw errors.invalidOption(name, 'must be a whole number ≥ 0', text);
  return Number(text);
}
