/**
 * A Sentinel deployment on loopback: a password-protected master, one replica of it, and three
 * sentinels (`redis-server <conf> --sentinel`, each with a generated sentinel.conf in its own
 * dir, on a held port) monitoring it under MASTER_NAME with quorum 2. The sentinels have a
 * password of their own. Ready once every sentinel knows the replica and the two other
 * sentinels, so a SENTINEL FAILOVER has somewhere to go and every sentinel can say where.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { HeldPort } from '../../helpers/ports.js';
import { waitFor } from '../../helpers/queue.js';
import { holdPort, type RedisServerHandle, startStandalone } from '../../helpers/redis.js';

export const MASTER_NAME = 'mymaster';

export interface SentinelSetup {
  master: RedisServerHandle;
  replica: RedisServerHandle;
  /** the sentinels' addresses */
  sentinels: { host: string; port: number }[];
  /** requirepass of the master and the replica */
  password: string;
  /** requirepass of the sentinels */
  sentinelPassword: string;
  /** a client on one sentinel, for SENTINEL commands */
  ask(...args: (string | number)[]): Promise<unknown>;
  /** the port Sentinel names as the master now */
  masterPort(): Promise<number>;
  stop(): Promise<void>;
}

const node = (port: number, password: string) => {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    password,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  return client;
};

async function on<T>(port: number, password: string, fn: (c: Redis) => Promise<T>): Promise<T> {
  const client = node(port, password);
  try {
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

function sentinelConf(
  port: number,
  masterPort: number,
  password: string,
  sentinelPassword: string,
) {
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    `requirepass "${sentinelPassword}"`,
    // the sentinels log in to each other with it
    `sentinel sentinel-pass "${sentinelPassword}"`,
    `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
    `sentinel auth-pass ${MASTER_NAME} "${password}"`,
    `sentinel down-after-milliseconds ${MASTER_NAME} 2000`,
    `sentinel failover-timeout ${MASTER_NAME} 10000`,
    '',
  ].join('\n');
}

export async function startSentinels(): Promise<SentinelSetup> {
  const password = 'master-secret-7f3a';
  const sentinelPassword = 'sentinel-secret-91c2';
  const children: ChildProcess[] = [];
  const holds: HeldPort[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'skyq-sentinel-'));
  const servers: RedisServerHandle[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    for (const hold of holds) hold.release();
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const master = await startStandalone({ password });
    servers.push(master);
    const replica = await startStandalone({ password });
    servers.push(replica);
    for (const port of [master.port, replica.port]) {
      await on(port, password, async (c) => {
        await c.call('CONFIG', 'SET', 'masterauth', password); // either may be a replica later
        await c.call('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
      });
    }
    await on(replica.port, password, (c) => c.call('REPLICAOF', '127.0.0.1', master.port));
    await waitFor('the replica in sync', () =>
      on(replica.port, password, async (c) =>
        /master_link_status:up/.test(await c.info('replication')) ? true : undefined,
      ),
    );
    for (let i = 0; i < 3; i++) {
      const hold = await holdPort();
      holds.push(hold);
      const conf = join(dir, `sentinel-${hold.port}.conf`);
      writeFileSync(conf, sentinelConf(hold.port, master.port, password, sentinelPassword), {
        mode: 0o600,
      });
      const log = openSync(join(dir, `sentinel-${hold.port}.log`), 'a');
      const child = spawn('redis-server', [conf, '--sentinel'], {
        stdio: ['ignore', log, log],
        cwd: dir,
      });
      closeSync(log);
      child.unref();
      children.push(child);
    }
    const ports = holds.map((h) => h.port);
    await waitFor(
      'every sentinel to know the replica and the other two sentinels',
      async () => {
        const states = await Promise.all(
          ports.map((port) =>
            on(port, sentinelPassword, async (c) => {
              const fields = (await c.call('SENTINEL', 'MASTER', MASTER_NAME)) as string[];
              const field = (name: string) => Number(fields[fields.indexOf(name) + 1]);
              return field('num-slaves') === 1 && field('num-other-sentinels') === 2;
            }).catch(() => false),
          ),
        );
        return states.every(Boolean) ? true : undefined;
      },
      30_000,
      200,
    );
    const ask = (...args: (string | number)[]) =>
      on(ports[0] as number, sentinelPassword, (c) => c.call(...(args as [string, ...string[]])));
    return {
      master,
      replica,
      sentinels: ports.map((port) => ({ host: '127.0.0.1', port })),
      password,
      sentinelPassword,
      ask,
      masterPort: async () =>
        Number(((await ask('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as string[])[1]),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
