// The HTTP layer: /metrics and /healthz of a launcher, and the dashboard, either inside a
// launcher (`skyq start --http`, figures read from its own actors) or on its own
// (`skyq dashboard`, figures every launcher publishes to Redis).

import { errors } from '../base/errors.js';
import type { QueueOptions } from '../queue/config.js';
import { DEFAULT_KEEP_DONE } from '../queue/history/retention.js';
import { Queue } from '../queue/queue.js';
import type { LauncherStats } from '../runtime/launcher-stats.js';
import { readAllStats } from '../runtime/registry.js';
import { withTimeout } from '../runtime/rpc.js';
import { reportTo, ServerChecks, type ServerState } from '../runtime/server-checks.js';
import { actionRoutes } from './actions.js';
import { DEFAULT_HTTP_PORT, type ListenAddress, parseListenAddress } from './address.js';
import { type ApiContext, readRoutes } from './api.js';
import { checkHealth, type Pingable } from './health.js';
import { History } from './history.js';
import { listRoutes } from './list-api.js';
import { MetricsExporter } from './metrics.js';
import { pageRoutes } from './page.js';
import { AccessPolicy, PUBLIC_URL_ENV, TOKEN_ENV } from './policy.js';
import { HttpServer, json, type Route } from './server.js';

export { DEFAULT_HTTP_PORT, type ListenAddress, parseListenAddress } from './address.js';

/**
 * The HTTP server that serves the dashboard, /metrics and /healthz beside the actors (startActors'
 * `http` option).
 */
export interface HttpOptions {
  /** "host:port", "host", "port", or an address; default 127.0.0.1:9464 */
  listen?: string | ListenAddress;
  /** required unless listening on loopback; default $SKYQ_DASHBOARD_TOKEN */
  authToken?: string;
  /**
   * the URL people reach the dashboard at, e.g. behind a TLS reverse proxy
   * (https://queue.example.com/): its origin and host are accepted; default $SKYQ_PUBLIC_URL
   */
  publicUrl?: string;
  /** the stand-alone dashboard: serve even where Redis can evict messages (default false) */
  allowEviction?: boolean;
}

/** A running HTTP server: where it is, and how to stop it. */
export interface HttpHandle {
  /** the URL a person opens */
  readonly url: string;
  /** the address it listens on (the port the system picked, for port 0) */
  readonly address: ListenAddress;
  /** stops listening and closes its connections */
  close(): Promise<void>;
}

/** What the HTTP layer reads from a launcher (a Launcher fits). */
export interface LauncherSource extends Pingable {
  stats(): Promise<LauncherStats>;
  /** each Redis server's eviction policy and clock skew, as the launcher last checked */
  servers(): ServerState[];
}

/** How long a scrape or a reading waits for the group depths before going on without them. */
const DEPTHS_TIMEOUT_MS = 1000;

/** /metrics, /healthz and the dashboard of one running launcher. */
export function serveLauncher(
  launcher: LauncherSource,
  queueOptions: QueueOptions,
  http: HttpOptions,
): Promise<HttpHandle> {
  // Its reads leave out what its own consumers' next trim takes: their retention, given or not.
  const own = { ...queueOptions, keepDone: queueOptions.keepDone ?? DEFAULT_KEEP_DONE };
  return serve(own, http, 'launcher', launcher, async () => [await launcher.stats()]);
}

/** The dashboard alone, showing every launcher that publishes to this Redis. */
export function serveDashboard(queueOptions: QueueOptions, http: HttpOptions): Promise<HttpHandle> {
  // A dashboard reads: it leaves the data format as it is (its actions' scripts raise a group's).
  const reader = { raiseFormat: false, ...queueOptions };
  return serve(reader, http, 'redis', null, (queue) =>
    readAllStats(queue.client, queue.config.prefix),
  );
}

/** Throws what serving would: a malformed address, or an open one without a token. */
export function checkHttpOptions(http: HttpOptions): {
  address: ListenAddress;
  policy: AccessPolicy;
} {
  const listen = http.listen ?? true;
  const address = typeof listen === 'object' ? listen : parseListenAddress(listen);
  const token = http.authToken ?? process.env[TOKEN_ENV] ?? null;
  const publicUrl = http.publicUrl ?? (process.env[PUBLIC_URL_ENV] || null);
  return { address, policy: new AccessPolicy(address, token, publicUrl) };
}

async function serve(
  queueOptions: QueueOptions,
  http: HttpOptions,
  mode: ApiContext['mode'],
  launcher: LauncherSource | null,
  launchers: (queue: Queue) => Promise<LauncherStats[]>,
): Promise<HttpHandle> {
  // Refuse an open address without a token before connecting anywhere.
  const { address: wanted, policy } = checkHttpOptions(http);
  const queue = new Queue({ ...queueOptions, warnEviction: false }); // servers are checked below
  queue.client.on('error', () => undefined); // outages show in /healthz and on the page
  let checks: ServerChecks | null = null;
  if (!launcher) {
    try {
      checks = await checkServers(queue, http.allowEviction === true);
    } catch (error) {
      await queue.close();
      throw error;
    }
  }
  const servers = () => (launcher ? launcher.servers() : (checks?.states ?? []));
  const depths = () => withTimeout(queue.counts(), DEPTHS_TIMEOUT_MS, 'reading group depths');
  const limits = () =>
    withTimeout(queue.rateLimits.list(), DEPTHS_TIMEOUT_MS, 'reading the rate limits');
  const history = new History(async () => {
    const [counts, stats] = await Promise.all([depths(), launchers(queue)]);
    return { counts, launchers: stats };
  });
  const context: ApiContext = { queue, history, mode, servers };
  const routes: Route[] = [
    ...pageRoutes(policy),
    ...readRoutes(context),
    ...listRoutes(context),
    ...actionRoutes(context),
    {
      method: 'GET',
      path: '/healthz',
      handle: async () => {
        const health = await checkHealth(launcher, queue.client, servers());
        const status = !health.healthy ? 'unhealthy' : health.warnings.length ? 'degraded' : 'ok';
        return json({ status, ...health }, health.healthy ? 200 : 503);
      },
    },
    metricsRoute(
      launcher
        ? new MetricsExporter(async () => {
            const [stats, counts, buckets] = await Promise.all([
              launcher.stats(),
              depths().catch(() => null),
              limits().catch(() => null),
            ]);
            return { stats, counts, servers: launcher.servers(), limits: buckets };
          })
        : // Every launcher publishing to this Redis, each under its `launcher` label. A Redis
          // that cannot be read gives a scrape without them whose skyq_group_up are all 0.
          new MetricsExporter(
            async () => {
              const [stats, counts, buckets] = await Promise.all([
                launchers(queue).catch(() => []),
                depths().catch(() => null),
                limits().catch(() => null),
              ]);
              return { stats, counts, servers: servers(), limits: buckets };
            },
            { perLauncher: true, groups: queue.config.groups },
          ),
    ),
  ];
  let server: HttpServer;
  try {
    server = await HttpServer.listen(wanted, policy, routes);
  } catch (error) {
    checks?.stop();
    await queue.close();
    throw listenError(wanted, error as NodeJS.ErrnoException);
  }
  history.start();
  let closing: Promise<void> | null = null;
  const close = async () => {
    history.stop();
    checks?.stop();
    await server.close();
    // While ioredis reconnects, quit() waits for a Redis that may never come back.
    if (queue.client.status === 'ready') await queue.close();
    else queue.client.disconnect();
  };
  return {
    url: server.url,
    address: server.address,
    close() {
      closing ??= close();
      return closing;
    },
  };
}

function metricsRoute(exporter: MetricsExporter): Route {
  return {
    method: 'GET',
    path: '/metrics',
    handle: async () => ({ type: exporter.contentType, body: await exporter.render() }),
  };
}

/** The stand-alone dashboard checks the servers it reads as a launcher does (see server-checks.ts). */
async function checkServers(queue: Queue, allowEviction: boolean): Promise<ServerChecks> {
  const log = (level: 'info' | 'warn' | 'error') => (_fields: object, line: string) =>
    level === 'info' ? console.log(`skyq: ${line}`) : undefined;
  const { prefix, groups } = queue.config;
  const checks = new ServerChecks(queue.client, {
    allowEviction,
    report: reportTo({ info: log('info'), warn: log('warn'), error: log('error') }),
    dataset: { prefix, groups: Array.from({ length: groups }, (_, g) => g) },
  });
  await withTimeout(checks.check(), 5000, 'server checks').catch(() => undefined);
  const refusal = checks.refusal();
  if (refusal) throw refusal;
  checks.watch();
  return checks;
}

/** Why the server could not listen, and what to give instead (a taken port is the usual case). */
function listenError(wanted: ListenAddress, error: NodeJS.ErrnoException): Error {
  const host = wanted.host.includes(':') ? `[${wanted.host}]` : wanted.host;
  const at = `${host}:${wanted.port}`;
  const problem = {
    EADDRINUSE: `the port is in use (another dashboard or program listens there); pick another, e.g. --http ${host}:${wanted.port + 1}, or --http ${host}:0 for any free one`,
    EADDRNOTAVAIL: `this machine has no such address; pick one it has, e.g. --http 127.0.0.1:${wanted.port}`,
    EACCES: `ports below 1024 need privileges; pick another, e.g. --http ${host}:${DEFAULT_HTTP_PORT}`,
  }[error.code ?? ''];
  return problem === undefined ? error : errors.listen(at, problem);
}
