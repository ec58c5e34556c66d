// The dashboard's write side. Each action is a POST (the server checks it is same-origin and
// JSON, see policy.ts) and answers after a fresh reading, so the page's next poll shows it.
// Bulk dead-letter actions need an explicit `all: true`: an empty body never means everything.
// A body field a route does not take, or any query parameter, is a 400 naming it (params.ts).
// A job named in the path may also carry `group` (look only there) and `idBase64` (its bytes,
// for an id that is not UTF-8, as pages give it back).
import { errors } from '../base/errors.js';
import { checkDuration, checkEpochMs } from '../queue/options.js';
import type { ApiContext } from './api.js';
import { bodyObject, idBytes } from './params.js';
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
      query: [],
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
      query: [],
      handle: async ({ params, body }) => {
        const { id, where } = jobOf(params[0] as string, bodyObject(body, JOB_FIELDS));
        return after(json({ cancelled: await queue.cancel(id, where) }));
      },
    },
    {
      method: 'POST',
      path: SCHEDULE_REMOVE_PATH,
      query: [],
      handle: async ({ params, body }) => {
        bodyObject(body, []);
        return json({ removed: await queue.schedules.remove(params[0] as string) });
      },
    },
    {
      method: 'POST',
      path: RESCHEDULE_PATH,
      query: [],
      handle: async ({ params, body }) => {
        const fields = bodyObject(body, [...JOB_FIELDS, 'delayMs', 'runAt']);
        const { id, where } = jobOf(params[0] as string, fields);
        const when = dueOf(fields);
        return after(json({ rescheduled: await queue.reschedule(id, { ...when, ...where }) }));
      },
    },
  );
  for (const action of ['pause', 'resume'] as const) {
    routes.push({
      method: 'POST',
      path: `/api/groups/${action}`,
      query: [],
      handle: async ({ body }) => {
        const { group } = bodyObject(body, ['group']);
        if (group !== undefined && typeof group !== 'number') {
          throw errors.invalidOption('group', 'must be a group number', group);
        }
        return after(json({ changed: await queue[action](group) }));
      },
    });
  }
  return routes;
}

/** What a job route's body may carry beside its own fields. */
const JOB_FIELDS = ['group', 'idBase64'];

/** The job a route names: the path's id, or the bytes of `idBase64`; and where to look. */
function jobOf(
  pathId: string,
  fields: Record<string, unknown>,
): { id: string | Buffer; where: { group?: number } } {
  const { group, idBase64 } = fields;
  if (group !== undefined && typeof group !== 'number') {
    throw errors.invalidOption('group', 'must be a group number', group);
  }
  const id = idBase64 === undefined ? pathId : idBytes('idBase64', idBase64);
  return { id, where: group === undefined ? {} : { group } };
}

function selection(body: unknown): { group?: number; ids?: (string | Buffer)[] } {
  const { ids, group, all } = bodyObject(body, ['ids', 'group', 'all']);
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
  if (typeof base64 === 'string') return idBytes(`ids[${index}].base64`, base64);
  throw errors.invalidOption(`ids[${index}]`, 'must be a string or { base64 }', id);
}

function dueOf(fields: Record<string, unknown>): { delay: number } | { runAt: number } {
  const { delayMs, runAt } = fields;
  if ((delayMs === undefined) === (runAt === undefined)) {
    throw errors.invalidOption('reschedule', 'give delayMs or runAt (epoch ms), one of them');
  }
  return delayMs !== undefined
    ? { delay: checkDuration('delayMs', delayMs) }
    : { runAt: checkEpochMs('runAt', runAt) };
}
