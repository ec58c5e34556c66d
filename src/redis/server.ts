/**
 * Private redis-server processes for tests, benchmarks and the embedded `skyq start` default.
 * Each server gets its own port and data dir, so nothing here ever touches a shared Redis.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

export const REDIS_INSTALL_HINT =
  'redis-server is not installed: install it with `apt-get install -y redis-server` (Debian/Ubuntu) ' +
  'or `brew install redis`, or point skyq at a running Redis with --redis URL / REDIS_URL';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
const CLUSTER_TIMEOUT_MS = 20_000;
const CLUSTER_SLOTS = 16384;
const BUS_OFFSET = 10_000; // Redis Cluster always puts its node-to-node bus on port + 10000.

export interface RedisServerHandle {
  port: number;
  host: string;
  url: string;
  dir: string;
  pid: number;
  stop(): Promise<void>;
}

export interface StartRedisServerOptions {
  port?: number;
  dir?: string;
  appendonly?: boolean;
  cluster?: boolean;
  extraArgs?: string[];
  keepDir?: boolean;
}

export interface RedisClusterHandle {
  nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

const err = (code: string, message: string) => Object.assign(new Error(message), { code });
export const redisNotInstalledError = () => err('SKYQ_REDIS_NOT_INSTALLED', REDIS_INSTALL_HINT);
const redisStartError = (port: number, reason: string, log: string) =>
  err('SKYQ_REDIS_START_FAILED', `redis-server on port ${port} failed to start: ${reason}\n${log}`);
const noFreePortError = (n: number) => err('SKYQ_NO_FREE_PORT', `found no ${n} free port(s)`);
const clusterTimeoutError = (info: string) =>
  err('SKYQ_CLUSTER_TIMEOUT', `Redis Cluster not ready in ${CLUSTER_TIMEOUT_MS} ms:\n${info}`);

export function redisServerAvailable(): boolean {
  const res = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return res.error === undefined && res.status === 0;
}

// Children still running when Node exits are killed synchronously (the only thing 'exit' allows),
// so a forgotten stop() or a crashed test never leaves an orphaned redis-server behind.
const live = new Map<ChildProcess, string | undefined>(); // child -> temp dir to remove
process.on('exit', () => {
  for (const [child, dir] of live) {
    child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

/** Binds `port` (0 = any) on HOST and releases it again; resolves the port, or undefined if taken. */
function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, HOST, () => {
      const bound = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

export async function findFreePort(): Promise<number> {
  const port = await tryListen(0);
  if (port === undefined) throw noFreePortError(1);
  return port;
}

/** `withBus` also reserves port + 10000 for the cluster bus. */
export async function findFreePorts(
  n: number,
  opts: { withBus?: boolean } = {},
): Promise<number[]> {
  const withBus = opts.withBus ?? false;
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let attempt = 0; ports.length < n; attempt++) {
    if (attempt >= n * 50) throw noFreePortError(n);
    // Kernel-chosen ports may lie above 55535 and leave no room for the bus, hence a fixed range.
    const p = withBus ? 20_000 + Math.floor(Math.random() * 30_000) : await findFreePort();
    const needed = withBus ? [p, p + BUS_OFFSET] : [p];
    if (needed.some((q) => taken.has(q))) continue;
    if (withBus && !((await tryListen(p)) && (await tryListen(p + BUS_OFFSET)))) continue;
    for (const q of needed) taken.add(q);
    ports.push(p);
  }
  return ports;
}

// Raw RESP instead of a client: no reconnect noise while the server is still booting. INFO's
// process_id proves the answer comes from *our* child, not from a stranger that owns the port.
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: HOST });
    let buf = '';
    const done = (pid: number | undefined) => {
      sock.destroy();
      resolve(pid);
    };
    sock.setTimeout(500, () => done(undefined));
    sock.once('error', () => done(undefined));
    sock.once('close', () => done(undefined));
    sock.once('connect', () => sock.write('PING\r\nINFO server\r\n'));
    sock.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      // Anything but +PONG (e.g. -LOADING while the AOF is replayed) means "not yet".
      if (buf.length >= 5 && !buf.startsWith('+PONG')) return done(undefined);
      const m = /process_id:(\d+)\r\n/.exec(buf);
      if (m) done(Number(m[1]));
    });
  });
}

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
  const logFile = join(dir, `redis-${port}.log`);
  const args = ['--port', String(port), '--bind', HOST, '--save', '', '--dir', dir];
  args.push('--appendonly', opts.appendonly ? 'yes' : 'no', '--daemonize', 'no', '--logfile', '');
  if (opts.cluster) {
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`);
    args.push('--cluster-node-timeout', '5000');
  }
  args.push(...(opts.extraArgs ?? []));

  // Output goes to a file rather than a pipe: pipes would keep the event loop alive, and the
  // file still holds the reason when redis refuses to start.
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn('redis-server', args, { stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  child.unref(); // the caller's own work decides how long Node lives; the exit hook cleans up
  live.set(child, ownedDir ? dir : undefined);
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
    const pid = await probe(port);
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
    url: `redis://${HOST}:${port}`,
    dir,
    pid: child.pid as number,
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}

/** A real Redis Cluster of `masters` (default 3) masters and no replicas. */
export async function startRedisCluster(
  opts: { masters?: number } = {},
): Promise<RedisClusterHandle> {
  const count = opts.masters ?? 3;
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startRedisServer({ cluster: true })),
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
  const clients = servers.map(
    (s) => new Redis({ host: s.host, port: s.port, lazyConnect: true, retryStrategy: () => null }),
  );
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
