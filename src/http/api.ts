// The dashboard's read side: the overview (depths, actors, recent samples), a page of dead
// letters, and one job by id. Everything but dead letters and jobs comes from the History's
// last reading, so pages polling every second add no Redis work.

import { errors } from '../base/errors.js';
import type { Queue } from '../queue/queue.js';
import { previewOf } from '../queue/schedules/preview.js';
import { mergeNameFigures } from '../runtime/name-stats.js';
import type { ServerState } from '../runtime/server-checks.js';
import { actorKey, type History } from './history.js';
import { preview } from './preview.js';
import { json, problem, type Reply, type Route } from './server.js';

/** next run times a schedule row shows */
const UPCOMING = 3;
/** characters of a body a dead-letter row shows */
const ROW_PREVIEW = 300;
/** characters of a body the job view shows */
const JOB_PREVIEW = 64 * 1024;
export const JOB_PATH = /^\/api\/jobs\/([^/]+)$/;

export interface ApiContext {
  queue: Queue;
  history: History;
  /** 'launcher': this process runs the actors; 'redis': figures published by every launcher */
  mode: 'launcher' | 'redis';
  /** each Redis server's eviction policy and clock skew, as this process last checked */
  servers: () => ServerState[];
}

export function readRoutes(context: ApiContext): Route[] {
  return [
    { method: 'GET', path: '/api/overview', handle: ({ url }) => overview(context, url) },
    { method: 'GET', path: '/api/dead', handle: ({ url }) => deadLetters(context, url) },
    { method: 'GET', path: '/api/schedules', handle: () => schedules(context) },
    {
      method: 'GET',
      path: '/api/rate-limits',
      handle: async () => json({ limits: await context.queue.rateLimits.list() }),
    },
    { method: 'GET', path: JOB_PATH, handle: ({ params }) => job(context, params[0] as string) },
  ];
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
  const since = numberParam(url, 'since') ?? 0;
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
  const group = numberParam(url, 'group');
  const limit = numberParam(url, 'limit') ?? 20;
  // Pages go by cursor: an offset made each group read every letter before it.
  if (url.searchParams.has('offset')) {
    throw errors.invalidOption('offset', 'is not taken: pass the previous page’s next as cursor');
  }
  const cursor = url.searchParams.get('cursor') || undefined;
  // Fresh counts, not the last reading: the total must agree with the page of letters.
  const [page, counts] = await Promise.all([
    queue.deadLetters.page({
      ...(group === undefined ? {} : { group }),
      ...(cursor === undefined ? {} : { after: cursor }),
      limit: Math.min(limit, 500),
      // Rows show ROW_PREVIEW characters: at most 4 bytes each are read, never whole bodies.
      previewBytes: ROW_PREVIEW * 4,
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

async function job({ queue }: ApiContext, id: string): Promise<Reply> {
  const info = await queue.get(id);
  if (!info) return problem(404, `no message ${id} (unknown, finished, or cancelled)`);
  return json({ ...info, body: preview(info.body, JOB_PREVIEW) });
}

/** An optional whole-number query parameter; a malformed one is a 400 naming it. */
function numberParam(url: URL, name: string): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return undefined;
  if (!/^\d+$/.test(text)) throw errors.invalidOption(name, 'must be a whole number ≥ 0', text);
  return Number(text);
}
