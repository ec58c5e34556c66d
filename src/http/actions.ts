// The dashboard's write side. Each action is a POST (the server checks it is same-origin and
// JSON, see policy.ts) and answers after a fresh reading, so the page's next poll shows it.
// Bulk dead-letter actions need an explicit `all: true`: an empty body never means everything.
import { errors } from '../base/errors.js';
import { checkDuration, checkEpochMs } from '../queue/options.js';
import type { ApiContext } from './api.js';
import { json, type Reply, type Route } from './server.js';

const RESCHEDULE_PATH = /^\/api\/jobs\/([^/]+)\/reschedule$/;
const CANCEL_PATH = /^\/api\/jobs\/([^/]+)\/cancel$/;
const SCHEDULE_REMOVE_PATH = /^\/api\/schedules\/([^/]+)\/remove$/;

export function actionRoutes(context: ApiContext): Route[] {
  const after = async (reply: Reply): Promise<Reply> => {
    await context.history.refresh();
    return reply;
  };
  const { queue } = context;
  const routes: Route[] = [];
  for (const action of ['retry', 'purge'] as const) {
    routes.push({
      method: 'POST',
      path: `/api/dead/${action}`,
      handle: async ({ body }) => {
        const count = await queue.deadLetters[action](selection(body));
        return after(json({ count }));
      },
    });
  }
  routes.push(
    {
      method: 'POST',
      path: CANCEL_PATH,
      handle: async ({ params }) =>
        after(json({ cancelled: await queue.cancel(params[0] as string) })),
    },
    {
      method: 'POST',
      path: SCHEDULE_REMOVE_PATH,
      handle: async ({ params }) =>
        json({ removed: await queue.schedules.remove(params[0] as string) }),
    },
    {
      method: 'POST',
      path: RESCHEDULE_PATH,
      handle: async ({ params, body }) => {
        const when = dueOf(body);
        return after(json({ rescheduled: await queue.reschedule(params[0] as string, when) }));
      },
    },
  );
  for (const action of ['pause', 'resume'] as const) {
    routes.push({
      method: 'POST',
      path: `/api/groups/${action}`,
      handle: async ({ body }) => {
        const { group } = objectOf(body);
        if (group !== undefined && typeof group !== 'number') {
          throw errors.invalidOption('group', 'must be a group number', group);
        }
        return after(json({ changed: await queue[action](group) }));
      },
    });
  }
  return routes;
}

function objectOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidOption('body', 'must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function selection(body: unknown): { group?: number; ids?: (string | Buffer)[] } {
  const { ids, group, all } = objectOf(body);
  if (group !== undefined && typeof group !== 'number') {
    throw errors.invalidOption('group', 'must be a group number', group);
  }
  const scope = group === undefined ? {} : { group };
  if (all === true) {
    if (ids !== undefined) throw errors.invalidOption('ids', 'give ids or all, not both');
    return scope;
  }
  if (!Array.isArray(ids) || ids.length === 0) {
    throw errors.invalidOption('ids', 'give a non-empty list of ids, or all: true');
  }
  return { ...scope, ids: ids.map(idOf) };
}

/** An id as text, or `{ base64 }` for one that is not UTF-8 (as the dead-letter list gives it). */
function idOf(id: unknown, index: number): string | Buffer {
  if (typeof id === 'string') return id;
  const base64 = (id as { base64?: unknown } | null)?.base64;
  if (typeof base64 === 'string') return Buffer.from(base64, 'base64');
  throw errors.invalidOption(`ids[${index}]`, 'must be a string or { base64 }', id);
}

function dueOf(body: unknown): { delay: number } | { runAt: number } {
  const { delayMs, runAt } = objectOf(body);
  if ((delayMs === undefined) === (runAt === undefined)) {
    throw errors.invalidOption('reschedule', 'give delayMs or runAt (epoch ms), one of them');
  }
  return delayMs !== undefined
    ? { delay: checkDuration('delayMs', delayMs) }
    : { runAt: checkEpochMs('runAt', runAt) };
}
