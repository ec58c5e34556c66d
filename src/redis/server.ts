/**
 * Private redis-server processes for tests, benchmarks and the embedded `skyq start` default.
 * Each server gets its own port and data dir, so nothing here ever touches a shared Redis.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { findFreePorts, HOST, probe } from './loopback.js';

export { findFreePort, findFreePorts } from './loopback.js';

export const REDIS_INSTALL_HINT =
  'redis-server is not installed: install it with `apt-get install -y redis-server` (Debian/Ubuntu) ' +
  'or `brew install redis`, or point skyq at a running Redis with --redis URL / REDIS_URL';

const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
const CLUSTER_TIMEOUT_MS = 20_000;
const CLUSTER_SLOTS = 16384;

export interface RedisServerHandle {
  port: number;
  host: string;
  url: string;
  dir: string;
  pid: number;
  stop(): Promise<void>;
  /** Lets it outlive this process: the exit hook that stops forgotten servers leaves it be. */
  leave(): void;
}

export interface StartRedisServerOptions {
  port?: number;
  dir?: string;
  appendonly?: boolean;
  cluster?: boolean;
  extraArgs?: string[];
  keepDir?: boolean;
  /**
   * requirepass: written to a config file of mode 0600 in `dir` (never on the
   * command line, where `ps` would show it); `url` then carries it
   */
  password?: string;
  /**
   * files only the owner can read: the data dir 0700, the server started under
   * umask 077 (AOF and RDB files 0600), the log file 0600
   */
  privateFiles?: boolean;
  /**
   * its own process group, so a Ctrl-C in the terminal reaches only skyq, which
   * drains first and then stops the server; if Node exits without stop(), the
   * server gets SIGTERM (it flushes its AOF), not SIGKILL
   */
  detached?: boolean;
}

export interface RedisClusterHandle {
  nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

const err = (code: string, message: string) => Object.assign(new Error(message), { code });
export const redisNotInstalledError = () => err('SKYQ_REDIS_NOT_INSTALLED', REDIS_INSTALL_HINT);
const redisStartError = (port: number, reason: string, log: string) =>
  err('SKYQ_REDIS_START_FAILED', `redis-server on port ${port} failed to start: ${reason}\n${log}`);
const clusterTimeoutError = (info: string) =>
  err('SKYQ_CLUSTER_TIMEOUT', `Redis Cluster not ready in ${CLUSTER_TIMEOUT_MS} ms:\n${info}`);

export function redisServerAvailable(): boolean {
  const res = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return res.error === undefined && res.status === 0;
}

// Children still running when Node exits are killed synchronously (the only thing 'exit' allows),
// so a forgotten stop() or a crashed test never leaves an orphaned redis-server behind.
const live = new Map<ChildProcess, { dir: string | undefined; signal: NodeJS.Signals }>();
process.on('exit', () => {
  for (const [child, { dir, signal }] of live) {
    child.kill(signal);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

export async function startRedisServer(
  opts: StartRedisServerOptions = {},
): Promise<RedisServerHandle> {
  if (!redisServerAvailable()) throw redisNotInstalledError();
  // A port we picked can be grabbed by someone else before redis binds it: retry with a fresh one.
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await findFreePorts(1, { withBus: opts.cluster }))[0];
    try {
      return await launch(port, opts);
    } catch (err) {
      const inUse = /already in use/i.test((err as Error).message);
      if (opts.port !== undefined || attempt >= 3 || !inUse) throw err;
    }
  }
}

async function launch(port: number, opts: StartRedisServerOptions): Promise<RedisServerHandle> {
  const ownedDir = opts.dir === undefined && !opts.keepDir;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'skyq-redis-'));
  const removeDir = () => ownedDir && rmSync(dir, { recursive: true, force: true });
  if (opts.privateFiles) chmodSync(dir, 0o700);
  const logFile = join(dir, `redis-${port}.log`);
  const args = ['--port', String(port), '--bind', HOST, '--save', '', '--dir', dir];
  if (opts.password !== undefined) {
    // A config file must be the first argument; the command line stays free of the password.
    const conf = join(dir, `redis-${port}.conf`);
    writeFileSync(conf, `requirepass ${quoteConfig(opts.password)}\n`, { mode: 0o600 });
    chmodSync(conf, 0o600);
    args.unshift(conf);
  }
  args.push('--appendonly', opts.appendonly ? 'yes' : 'no', '--daemonize', 'no', '--logfile', '');
  if (opts.cluster) {
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`);
    args.push('--cluster-node-timeout', '5000');
  }
  args.push(...(opts.extraArgs ?? []));

  // Output goes to a file rather than a pipe: pipes would keep the event loop alive, and the
  // file still holds the reason when redis refuses to start.
  const logFd = openSync(logFile, 'a', opts.privateFiles ? 0o600 : 0o666);
  let child: ChildProcess;
  try {
    // Node cannot give a child its own umask: a shell sets it and exec's the server (same pid).
    const [command, argv] = opts.privateFiles
      ? ['/bin/sh', ['-c', 'umask 077 && exec redis-server "$@"', 'redis-server', ...args]]
      : ['redis-server', args];
    child = spawn(command as string, argv as string[], {
      stdio: ['ignore', logFd, logFd],
      detached: opts.detached ?? false,
    });
  } finally {
    closeSync(logFd);
  }
  child.unref(); // the caller's own work decides how long Node lives; the exit hook cleans up
  live.set(child, {
    dir: ownedDir ? dir : undefined,
    signal: opts.detached ? 'SIGTERM' : 'SIGKILL',
  });
  child.once('exit', () => live.delete(child));
  let exitReason: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitReason = `process exited with ${signal ?? `code ${code}`}`;
      resolve();
    });
    child.once('error', (e) => {
      exitReason = `spawn failed: ${e.message}`;
      resolve();
    });
  });

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const pid = await probe(port, opts.password);
    if (pid !== undefined && pid === child.pid) break;
    if (exitReason !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
      removeDir();
      throw redisStartError(port, exitReason ?? `no PONG within ${START_TIMEOUT_MS} ms`, tail);
    }
    await sleep(50);
  }

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    child.kill('SIGTERM'); // with --save '' redis exits without writing an RDB
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(killer);
    removeDir();
  };
  return {
    port,
    host: HOST,
    url:
      opts.password === undefined
        ? `redis://${HOST}:${port}`
        : `redis://:${encodeURIComponent(opts.password)}@${HOST}:${port}`,
    dir,
    pid: child.pid as number,
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
    leave: () => {
      live.delete(child);
    },
  };
}

/** A value in redis.conf: quoted, with quotes and backslashes escaped. */
function quoteConfig(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * A real Redis Cluster of `masters` (default 3) masters and no replicas, on `ports` when given
 * (one per master, each with port + 10000 free for the bus; tests pass ports they hold).
 */
export async function startRedisCluster(
  opts: { masters?: number; ports?: number[] } = {},
): Promise<RedisClusterHandle> {
  const count = opts.ports?.length ?? opts.masters ?? 3;
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, i) =>
      startRedisServer({ cluster: true, port: opts.ports?.[i] }),
    ),
  );
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => void (await Promise.all(servers.map((s) => s.stop())));
  try {
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    await formCluster(servers);
  } catch (e) {
    await stop();
    throw e;
  }
  return { nodes: servers.map((s) => ({ host: s.host, port: s.port })), stop };
}

// Same slot layout as `redis-cli --cluster create`, done by hand so redis-cli is not required.
async function formCluster(servers: RedisServerHandle[]): Promise<void> {
  // A private server that went away is not coming back: fail fast instead of reconnecting.
  const clients = servers.map((s) => {
    const client = new Redis({
      host: s.host,
      port: s.port,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined); // the failing command says why
    return client;
  });
  try {
    const per = Math.floor(CLUSTER_SLOTS / clients.length);
    await Promise.all(
      clients.map(async (c, i) => {
        const last = i === clients.length - 1 ? CLUSTER_SLOTS - 1 : (i + 1) * per - 1;
        await c.call('CLUSTER', 'ADDSLOTSRANGE', i * per, last);
        // Distinct epochs up front spare the nodes a round of epoch-collision resolution.
        await c.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
      }),
    );
    // MEET every pair once (not just node 0 with the rest, as redis-cli does): waiting for
    // gossip to introduce the others took up to ~5 s, direct handshakes converge in ~2 s.
    const meets = servers.flatMap((s, j) =>
      clients.slice(0, j).map((c) => c.call('CLUSTER', 'MEET', s.host, s.port)),
    );
    await Promise.all(meets);
    // Every node must see a healthy cluster with all slots and all peers, not just the first one.
    const wanted = ['cluster_state:ok', `cluster_slots_assigned:${CLUSTER_SLOTS}`];
    wanted.push(`cluster_known_nodes:${servers.length}`);
    const ready = (info: string) => wanted.every((w) => info.split(/\r?\n/).includes(w));
    const deadline = Date.now() + CLUSTER_TIMEOUT_MS;
    for (;;) {
      const infos = (await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO')))) as string[];
      if (infos.every(ready)) return;
      if (Date.now() > deadline)
        throw clusterTimeoutError(infos.map((i) => i.trim()).join('\n--\n'));
      await sleep(100);
    }
  } finally {
    for (const c of clients) c.disconnect();
  }
}
