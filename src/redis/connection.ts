// One place that turns user options into an ioredis client, standalone or
// cluster, so the queue, the actors and the CLI connect the same way. Every
// client made here has an `error` listener (an outage is never an "Unhandled
// error event" flood) and remembers why it last failed, so a command that
// fails for want of a connection can say so in one line. Every one (and every copy made here)
// waits for a server loading its dataset with skyq's ready check, not ioredis's (ready-check.ts).
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { errors, type SkyqError } from '../base/errors.js';
import { scrubError } from '../base/redact.js';
import { boundWaits, DEFAULT_UNREACHABLE_MS } from './bounded-wait.js';
import {
  type ConnectionOptions,
  checkConnectionOptions,
  describeTarget,
  type RedisClient,
  usesTls,
  withDefaultRedis,
} from './connection-options.js';
import {
  describeConnectionError,
  isConnectionLoss,
  isLoginRefused,
  socketError,
} from './failure.js';
import { withReadyCheck } from './ready-check.js';
import { sentinelRedisOptions } from './sentinel.js';
import { SentinelClient } from './sentinel-switch.js';
import { nodeTlsOptions } from './tls.js';

export * from './connection-options.js';
export type { TlsOptions } from './tls.js';

export interface ConnectExtras {
  /** connection name shown by CLIENT LIST */
  name?: string;
  /** for blocking reads: never give up on a command while reconnecting */
  blocking?: boolean;
  /** connect only when asked (client.connect()) */
  lazy?: boolean;
}

/** How long a fail-fast connection waits for the TCP (and TLS) handshake. */
export const FAIL_FAST_CONNECT_MS = 3000;
/** How long a fail-fast command waits for its answer (a hung server). */
const FAIL_FAST_COMMAND_MS = 5000;
/** ensureReachable's answer comes within this, whatever the server does. */
const REACHABLE_WITHIN_MS = 4000;
/** Longest pause between a long-lived client's reconnect attempts. */
const RECONNECT_MAX_MS = 1000;
/** Reconnect attempts of a fail-fast client that was connected once (a blip, a restart). */
const FAIL_FAST_RETRIES = 3;

export function connect(named: ConnectionOptions, extras: ConnectExtras = {}): RedisClient {
  const options = withDefaultRedis(named);
  checkConnectionOptions(options);
  const pipelining = options.autoPipelining ?? true;
  let everReady = false;
  // Until it was ready once, a fail-fast client does not retry: a wrong address or
  // certificate will not fix itself, and the caller wants the answer now.
  const retry = (times: number) => (everReady && times <= FAIL_FAST_RETRIES ? 200 * times : null);
  // Blocking readers wait on purpose and retry by themselves: their waits are not bounded.
  const waitMs = extras.blocking ? 0 : (options.unreachableMs ?? DEFAULT_UNREACHABLE_MS);
  // A long-lived client tries again at least once a second however long Redis was away (ioredis
  // backs off to 2 s), so it is back within about a second of the server answering.
  const reconnect = (times: number) => Math.min(times * 100, RECONNECT_MAX_MS);
  const common: RedisOptions = {
    enableAutoPipelining: pipelining,
    ...(extras.name ? { connectionName: extras.name } : {}),
    ...(extras.blocking ? { maxRetriesPerRequest: null } : {}),
    ...(extras.lazy ? { lazyConnect: true } : {}),
    ...(options.tls ? { tls: nodeTlsOptions(options.tls) } : {}),
    ...(options.failFast
      ? {
          connectTimeout: FAIL_FAST_CONNECT_MS,
          commandTimeout: FAIL_FAST_COMMAND_MS,
          maxRetriesPerRequest: 1,
          retryStrategy: retry,
        }
      : { retryStrategy: reconnect, ...(waitMs > 0 ? { commandTimeout: waitMs } : {}) }),
  };
  let client: RedisClient;
  if (options.cluster !== undefined) {
    client = new Cluster(options.cluster, {
      // Never on a cluster: ioredis's auto-pipeline batches the commands of several slots of
      // one master, and when a reshard moves one of those slots it hands MOVED and ASK to the
      // callers instead of following them (it retries a pipeline only when all of it failed
      // alike), so its slot map is never refreshed and a long-lived producer fails for good
      // (ioredis#2075). Sent one by one, every command follows its own redirection.
      enableAutoPipelining: false,
      redisOptions: { ...common, enableAutoPipelining: false },
      ...(extras.lazy ? { lazyConnect: true } : {}),
      clusterRetryStrategy: options.failFast ? retry : reconnect,
    });
  } else if (options.sentinel !== undefined) {
    client = new SentinelClient(sentinelRedisOptions(options.sentinel, common, options.tls));
  } else {
    client = new Redis(options.redis as string, common);
  }
  withReadyCheck(client);
  client.on('ready', () => {
    everReady = true;
  });
  if (!options.failFast && waitMs > 0) boundWaits(client, waitMs);
  track(client, describeTarget(options), usesTls(options));
  return client;
}

interface Trouble {
  where: string;
  error: Error | null;
  /** the connection uses TLS (for hints about a TLS mismatch) */
  tls: boolean;
}

const troubles = new WeakMap<RedisClient, Trouble>();
/** The latest client made here or to fail (a CLI has one target). */
let lastTrouble: Trouble | null = null;

function track(client: RedisClient, where: string, tls: boolean): void {
  const trouble: Trouble = { where, error: null, tls };
  troubles.set(client, trouble);
  lastTrouble = trouble;
  const note = (error: Error) => {
    scrubError(error);
    // "Connection is closed." after a socket error says less than the socket error.
    if (trouble.error && isConnectionLoss(error)) return;
    trouble.error = error;
    lastTrouble = trouble;
  };
  client.on('error', note);
  if (client instanceof Cluster) {
    client.on('node error', (error: Error, node: string) => {
      note(error);
      // ioredis hides a cluster node's socket error behind "Connection is closed.": ask the socket.
      if (isConnectionLoss(error)) probeNode(trouble, node);
    });
  }
  client.on('ready', () => {
    trouble.error = null;
  });
}

const probes = new Set<Promise<void>>();

function probeNode(trouble: Trouble, node: string): void {
  const at = node.lastIndexOf(':');
  const probe = socketError(node.slice(0, at), Number(node.slice(at + 1)), 1000).then((error) => {
    if (error && (trouble.error === null || isConnectionLoss(trouble.error))) trouble.error = error;
    probes.delete(probe);
  });
  probes.add(probe);
}

/** Waits for the socket checks started on cluster node errors, so reasons are complete. */
export async function connectionChecksSettled(): Promise<void> {
  await Promise.all([...probes]);
}

/**
 * ERR_SKYQ_UNREACHABLE for an error that means "no connection", naming the
 * target and the reason the client last saw; ERR_SKYQ_AUTH for a refused
 * login; undefined for anything else. Without a client, the latest client
 * made by connect() is meant.
 */
export function explainConnectionError(
  error: unknown,
  client?: RedisClient,
): SkyqError | undefined {
  const trouble = client ? troubles.get(client) : lastTrouble;
  if (!trouble) return undefined;
  if (isLoginRefused(error))
    return errors.login(trouble.where, describeConnectionError(error, trouble.tls), error);
  if (!isConnectionLoss(error)) return undefined;
  return errors.unreachable(
    trouble.where,
    describeConnectionError(trouble.error ?? error, trouble.tls),
    error,
  );
}

/**
 * Connects once, fail-fast, and pings: resolves when Redis answers, rejects with
 * ERR_SKYQ_UNREACHABLE (one readable line) within a few seconds when it does not.
 */
export async function ensureReachable(options: ConnectionOptions): Promise<void> {
  const client = connect({ ...options, failFast: true }, { lazy: true, name: 'skyq-check' });
  let timer: NodeJS.Timeout | undefined;
  // A server that accepts connections and never answers would hold each command to its timeout.
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${REACHABLE_WITHIN_MS / 1000} s`)),
      REACHABLE_WITHIN_MS,
    );
  });
  try {
    await Promise.race([client.connect().then(() => client.ping()), silent]);
  } catch (error) {
    await connectionChecksSettled();
    const trouble = troubles.get(client);
    if (isLoginRefused(trouble?.error ?? error)) {
      const refusal = trouble?.error ?? error;
      throw errors.login(describeTarget(options), describeConnectionError(refusal), refusal);
    }
    throw errors.unreachable(
      describeTarget(options),
      describeConnectionError(trouble?.error ?? error, usesTls(options)),
      error,
    );
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/**
 * A new connection like `client` for blocking reads (XREAD BLOCK): no command timeout, and
 * its commands queue while it reconnects (its loop retries each failed read by itself).
 */
export function blockingCopy(client: RedisClient): RedisClient {
  const blocking = { commandTimeout: undefined, enableOfflineQueue: true };
  if (client instanceof Cluster) {
    const redisOptions = { ...client.options.redisOptions, ...blocking };
    return withReadyCheck(client.duplicate([], { enableOfflineQueue: true, redisOptions }));
  }
  return withReadyCheck(client.duplicate(blocking));
}

/**
 * A connection of its own to the server `server` talks to, for subscribers and the watcher's
 * side connections: the address, database, credentials and TLS, nothing else of its options
 * (no command timeout, no auto-pipelining). A Sentinel master has no fixed address: its copy
 * asks the sentinels too.
 */
export function sideConnection(server: Redis, own: RedisOptions): Redis {
  if (server.options.sentinels)
    return withReadyCheck(server.duplicate({ ...own, enableAutoPipelining: false }));
  const { host, port, db = 0, username, password, tls } = server.options;
  return withReadyCheck(new Redis({ host, port, db, username, password, tls, ...own }));
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}
