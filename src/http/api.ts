// The dashboard's read side: the overview (depths, actors, recent samples), a page of dead
// letters, and one job by id (job-api.ts). Everything but dead letters and jobs comes from the
// History's last reading, so pages polling every second add no Redis work. Each route takes the
// query parameters QUERY names: any other is a 400 naming it (params.ts).

import { errors, SkyqError } from '../base/errors.js';
import { checkOrder } from '../queue/page-order.js';
import type { Queue } from '../queue/queue.js';
import { previewOf } from '../queue/schedules/preview.js';
import { mergeNameFigures } from '../runtime/name-stats.js';
import type { ServerState } from '../runtime/server-checks.js';
import { actorKey, type History } from './history.js';
import { JOB_PATH, JOB_QUERY, job } from './job-api.js';
import { textParam, wholeNumber } from './params.js';
import { preview } from './preview.js';
import { json, type Reply, type Route } from './server.js';

/** next run times a schedule row shows */
const UPCOMING = 3;
/** characters of a body a dead-letter row shows */
const ROW_PREVIEW = 300;

/** The query parameters each read route takes. */
const QUERY: Record<string, readonly string[]> = {
  '/api/overview': ['since'],
  '/api/dead': ['group', 'limit', 'cursor', 'order'],
  '/api/schedules': [],
  '/api/rate-limits': [],
  [String(JOB_PATH)]: JOB_QUERY,
};
const withQuery = (routes: Route[]): Route[] =>
  routes.map((route) => ({ ...route, query: QUERY[String(route.path)] ?? [] }));

export interface ApiContext {
  queue: Queue;
  history: History;
  /** 'launcher': this process runs the actors; 'redis': figures published by every launcher */
  mode: 'launcher' | 'redis';
  /** each Redis server's eviction policy and clock skew, as this process last checked */
  servers: () => ServerState[];
}

export function readRoutes(context: ApiContext): Route[] {
  return withQuery([
    { method: 'GET', path: '/api/overview', handle: ({ url }) => overview(context, url) },
    { method: 'GET', path: '/api/dead', handle: ({ url }) => deadLetters(context, url) },
    { method: 'GET', path: '/api/schedules', handle: () => schedules(context) },
    {
      method: 'GET',
      path: '/api/rate-limits',
      handle: async () => json({ limits: await context.queue.rateLimits.list() }),
    },
    {
      method: 'GET',
      path: JOB_PATH,
      handle: ({ params, url }) => job(context, params[0] as string, url),
    },
  ]);
}

/** Each schedule with its next runs and a preview of its body, and Redis's clock to count from. */
async function schedules({ queue }: ApiContext): Promise<Reply> {
  const now = Math.round(await queue.clock(0).now());
  const list = await queue.schedules.list();
  const rows = await Promise.all(
    list.map(async ({ body, ...state }) => ({
      ...state,
      body: preview(body ?? null, ROW_PREVIEW),
      upcoming: await previewOf(state, { count: UPCOMING }, async () => now),
    })),
  );
  return json({ now, schedules: rows });
}

function overview({ queue, history, mode, servers }: ApiContext, url: URL): Reply {
  const since = wholeNumber(url, 'since') ?? 0;
  const latest = history.latest();
  const base = {
    prefix: queue.config.prefix,
    groups: queue.config.groups,
    mode,
    error: history.error,
    servers: servers().map(({ server, policy, evicting, skewMs, dataLost }) => ({
      server,
      policy,
      evicting,
      skewMs,
      dataLost: dataLost ?? null,
    })),
  };
  if (!latest)
    return json({
      ...base,
      at: null,
      depths: [],
      launchers: [],
      actors: [],
      names: [],
      intake: [],
      samples: [],
    });
  return json({
    ...base,
    at: latest.at,
    depths: latest.counts,
    launchers: latest.launchers.map(({ launcherId, host, pid, startedAt }) => ({
      id: launcherId,
      host,
      pid,
      startedAt,
    })),
    actors: latest.launchers.flatMap((launcher) =>
      launcher.actors.map((view) => {
        const stat = view.stat;
        return {
          launcher: launcher.launcherId,
          group: view.group,
          status: view.status,
          state: stat?.state ?? null,
          claimed: stat?.claimed ?? 0,
          done: stat?.done ?? 0,
          failed: stat?.failed ?? 0,
          retried: stat?.retried ?? 0,
          dead: stat?.dead ?? 0,
          inFlight: stat?.inFlight ?? 0,
          restarts: view.restarts,
          ratePerSecond: latest.rates[actorKey(launcher.launcherId, view.group)] ?? null,
          lateness: stat
            ? { p50: stat.summary.lateness.p50, p99: stat.summary.lateness.p99 }
            : null,
          lastError: stat?.lastError ?? view.lastCrash ?? null,
        };
      }),
    ),
    // Per job name over every launcher (each bounded to 100 names and 'other').
    names: mergeNameFigures(
      latest.launchers.map((launcher) => launcher.totals.names ?? []),
      false,
    ).map(({ name, done, failed, summary }) => ({ name, done, failed, p99: summary.p99 })),
    // The intake lists each launcher moves into skyq (src/runtime/intake/).
    intake: latest.launchers.flatMap((launcher) =>
      (launcher.intake ?? []).map((figure) => ({ launcher: launcher.launcherId, ...figure })),
    ),
    samples: history.since(since),
  });
}

async function deadLetters({ queue }: ApiContext, url: URL): Promise<Reply> {
  const group = wholeNumber(url, 'group');
  const limit = wholeNumber(url, 'limit') ?? 20;
  if (limit < 1 || limit > 500)
    throw errors.invalidOption('limit', 'must be between 1 and 500', limit);
  const cursor = textParam(url, 'cursor');
  const order = textParam(url, 'order');
  // Fresh counts, not the last reading: the total must agree with the page of letters.
  const [page, counts] = await Promise.all([
    queue.deadLetters
      .page({
        ...(group === undefined ? {} : { group }),
        ...(cursor === undefined ? {} : { after: cursor }),
        ...(order === undefined ? {} : { order: checkOrder('order', order) }),
        limit,
        // Rows show ROW_PREVIEW characters: at most 4 bytes each are read, never whole bodies.
        previewBytes: ROW_PREVIEW * 4,
      })
      .catch((error: unknown) => {
        // The library calls it `after`; here it is the `cursor` parameter.
        if (error instanceof SkyqError && error.field === 'after')
          throw errors.invalidOption('cursor', error.message.slice('after: '.length));
        throw error;
      }),
    queue.counts(),
  ]);
  const total = counts
    .filter((c) => group === undefined || c.group === group)
    .reduce((sum, c) => sum + c.dead, 0);
  return json({
    total,
    next: page.next,
    letters: page.letters.map(({ body, idBytes, truncated, recordBytes: _, ...letter }) => {
      const shown = preview(body, ROW_PREVIEW);
      return {
        ...letter,
        // An id that is not UTF-8 shows escaped; actions need its bytes back.
        ...(idBytes ? { idBase64: idBytes.toString('base64') } : {}),
        body: truncated ? { ...shown, truncated: true } : shown,
      };
    }),
  });
}
