// Redis Sentinel: the client asks the sentinels which server is the master of `master`, and
// asks again on every reconnect. In a failover the promoted replica drops its clients as it is
// promoted, but a demoted master that is still running drops them only when Sentinel
// reconfigures it, some 10 s after naming the new master, and takes writes until then (wiped
// when it resyncs). So skyq's clients do not wait for that: they leave as soon as a sentinel
// publishes the switch (sentinel-switch.ts), reconnect through the sentinels to the new master
// and send again what had no answer (test/faults/sentinel-failover.test.ts: 0 acknowledged adds
// lost). What the old master took between the replica's promotion and the switch (~1 s) is
// still lost unless the servers have min-replicas-to-write 1 (test/faults/sentinel-switch.test.ts).
import type { RedisOptions } from 'ioredis';
import { errors } from '../base/errors.js';
import { nodeTlsOptions, type TlsOptions } from './tls.js';

/** One Redis Sentinel. */
export interface SentinelNode {
  /** its host name or address */
  host: string;
  /** its port (26379 by convention) */
  port: number;
}

/** A master that Redis Sentinels name, and the logins for it and for them. */
export interface SentinelOptions {
  /** the sentinels (one that answers is enough to connect; switches are heard from each) */
  nodes: SentinelNode[];
  /** the master group's name, as in `sentinel monitor <name> …` */
  master: string;
  /** login on the master and its replicas (ACL user; leave out for requirepass) */
  username?: string;
  /** the master's and replicas' password */
  password?: string;
  /** login on the sentinels themselves (`requirepass` / `user` in sentinel.conf) */
  sentinelUsername?: string;
  /** the sentinels' own password, if they ask for one */
  sentinelPassword?: string;
  /** database number on the master (default 0) */
  db?: number;
}

const FIELDS = new Set([
  'nodes',
  'master',
  'username',
  'password',
  'sentinelUsername',
  'sentinelPassword',
  'db',
]);

/** Throws a SkyqError naming the field of `sentinel` that is malformed. */
export function checkSentinel(sentinel: unknown): SentinelOptions {
  if (typeof sentinel !== 'object' || sentinel === null)
    throw errors.invalidOption('sentinel', 'must be { nodes: [{ host, port }], master }');
  const options = sentinel as Record<string, unknown>;
  const unknown = Object.keys(options).find((key) => !FIELDS.has(key));
  if (unknown !== undefined)
    throw errors.invalidOption(`sentinel.${unknown}`, 'is not a sentinel option');
  const { nodes, master, db } = options;
  if (!Array.isArray(nodes) || nodes.length === 0)
    throw errors.invalidOption('sentinel.nodes', 'must be a non-empty list of { host, port }');
  for (const node of nodes) {
    if (typeof node?.host !== 'string' || !Number.isInteger(node?.port))
      throw errors.invalidOption(
        'sentinel.nodes',
        'every node needs a host string and a port number',
        node,
      );
  }
  if (typeof master !== 'string' || master === '')
    throw errors.invalidOption('sentinel.master', 'must name the master group (a string)');
  for (const field of ['username', 'password', 'sentinelUsername', 'sentinelPassword']) {
    // The value itself is never shown: it may be a password.
    if (options[field] !== undefined && typeof options[field] !== 'string')
      throw errors.invalidOption(`sentinel.${field}`, 'must be a string');
  }
  if (db !== undefined && (!Number.isInteger(db) || (db as number) < 0))
    throw errors.invalidOption('sentinel.db', 'must be a database number (0 or more)', db);
  return sentinel as SentinelOptions;
}

/** Where a sentinel client points, fit to show (no login). */
export function describeSentinel(sentinel: SentinelOptions): string {
  const nodes = sentinel.nodes.map((n) => `${n.host}:${n.port}`).join(',');
  return `sentinel master ${sentinel.master} via ${nodes}`;
}

/** The ioredis options of a client of the master `sentinel` names (over `common`). */
export function sentinelRedisOptions(
  sentinel: SentinelOptions,
  common: RedisOptions,
  tls: TlsOptions | undefined,
): RedisOptions {
  const { nodes, master, username, password, sentinelUsername, sentinelPassword, db } = sentinel;
  const secure = tls ? nodeTlsOptions(tls) : undefined;
  return {
    ...common,
    sentinels: nodes.map(({ host, port }) => ({ host, port })),
    name: master,
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(sentinelUsername !== undefined ? { sentinelUsername } : {}),
    ...(sentinelPassword !== undefined ? { sentinelPassword } : {}),
    ...(db !== undefined ? { db } : {}),
    // TLS settings apply to the sentinels and to the master alike.
    ...(secure ? { tls: secure, sentinelTLS: secure, enableTLSForSentinelMode: true } : {}),
  };
}
