// skyq's ready check, in place of ioredis's. After every connect, before the client is `ready`
// and sends what waited, ioredis (5.9.3, Redis#_readyCheck) asks INFO whether the server is
// still loading its dataset, when it answers -LOADING to nearly every command, and waits while
// it is. For a user that may not run INFO it console.warns "Skipping the ready check…" on
// every connection (a dozen lines for `skyq start`, each actor thread has its own) and does
// not wait at all, so the first commands fail with LOADING. Here INFO is asked while the user
// may run it (a Sentinel client checks its `role` line, as before); once refused it is not
// asked again on that client (each refusal is an ACL LOG entry), and a PING on a short
// connection of its own tells whether the server loads: one more connection per connect, for
// such a user only. Not on the connection itself: until it is ready, ioredis writes only
// commands Redis answers while loading (and INFO, AUTH, SELECT, CLIENT), and queues a PING
// behind the very readiness it is to tell. Nothing is printed either way.
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './connection-options.js';

/** How often a loading server is asked again (ioredis waited INFO's estimate, up to 10 s). */
const LOADING_POLL_MS = 200;
/** The PING connection's time to connect and answer; past it the check lets the client go. */
const PROBE_MS = 2000;

type Info = Record<string, string>;
type Done = (error: Error | null, info?: Info) => void;

/** ioredis's members this replaces or reads (private in its types). */
interface Checked {
  _readyCheck(done: Done): void;
  connectionEpoch: number;
}

/**
 * Gives `client` skyq's ready check (a cluster: each of its node connections, now and later).
 * Every client skyq makes goes through here (connection.ts); a `connection` given by the user
 * keeps its own.
 */
export function withReadyCheck<T extends RedisClient>(client: T): T {
  if (client instanceof Cluster) {
    for (const node of client.nodes('all')) withReadyCheck(node);
    client.on('+node', (node: Redis) => withReadyCheck(node));
    return client;
  }
  const checked = client as unknown as Checked;
  const refused = { info: false };
  checked._readyCheck = (done) => {
    const epoch = checked.connectionEpoch;
    // A check outlived by its connection stops; ioredis ignores its answer anyway.
    const current = () => checked.connectionEpoch === epoch && client.status === 'connect';
    readiness(client, refused, current).then(
      (info) => info && done(null, info),
      (error: Error) => done(error),
    );
  };
  return client;
}

/** INFO's fields once the server is not loading; null when the connection went first. */
async function readiness(
  client: Redis,
  refused: { info: boolean },
  current: () => boolean,
): Promise<Info | null> {
  let probe: Redis | undefined;
  try {
    for (;;) {
      const info = refused.info ? undefined : await askInfo(client, refused);
      if (info !== undefined) {
        if (info.loading !== '1') return info;
      } else {
        probe ??= probeOf(client);
        if (!(await loads(probe))) return {};
      }
      await sleep(LOADING_POLL_MS);
      if (!current()) return null;
    }
  } finally {
    probe?.disconnect();
  }
}

/** INFO's fields, or undefined when the user may not run it (an error else, as for ioredis). */
async function askInfo(client: Redis, refused: { info: boolean }): Promise<Info | undefined> {
  try {
    const info: Info = {};
    for (const line of (await client.info()).split('\r\n')) {
      const at = line.indexOf(':');
      if (at > 0) info[line.slice(0, at)] = line.slice(at + 1);
    }
    return info;
  } catch (error) {
    if (!/\bNOPERM\b/.test((error as Error).message)) throw error;
    refused.info = true;
    return undefined;
  }
}

/**
 * The server answers the probe's PING with LOADING. Anything else lets the client go: a
 * probe that cannot connect or gets another error cannot tell, and the client's own commands
 * meet whatever it is.
 */
async function loads(probe: Redis): Promise<boolean> {
  try {
    await probe.ping();
    return false;
  } catch (error) {
    return /^LOADING\b/.test((error as Error).message);
  }
}

/** A connection to the server `client` reaches (same login, TLS, sentinels), made once. */
function probeOf(client: Redis): Redis {
  const probe = new Redis({
    ...client.options,
    connectionName: 'skyq-ready-check',
    lazyConnect: false,
    enableReadyCheck: false,
    enableAutoPipelining: false,
    enableOfflineQueue: true,
    readOnly: false,
    autoResubscribe: false,
    reconnectOnError: null,
    retryStrategy: () => null,
    connectTimeout: PROBE_MS,
    commandTimeout: PROBE_MS,
  });
  probe.on('error', () => undefined); // its failure only means "cannot tell"
  return probe;
}
