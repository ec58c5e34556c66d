// Loopback ports for private redis-server processes: free ones to start on,
// and a raw check of whether our own server answers on one.
import { type AddressInfo, connect, createServer } from 'node:net';

export const HOST = '127.0.0.1';
export const BUS_OFFSET = 10_000; // Redis Cluster always puts its node-to-node bus on port + 10000.

const noFreePortError = (n: number) =>
  Object.assign(new Error(`found no ${n} free port(s)`), { code: 'SKYQ_NO_FREE_PORT' });

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

/** A command in RESP, so any bytes (a password) go through unharmed. */
function resp(parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;
}

// Raw RESP instead of a client: no reconnect noise while the server is still booting. INFO's
// process_id proves the answer comes from *our* child, not from a stranger that owns the port.
export function probe(port: number, password?: string): Promise<number | undefined> {
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
    const auth = password === undefined ? '' : resp(['AUTH', password]);
    const expected = password === undefined ? '+PONG' : '+OK\r\n+PONG';
    sock.once('connect', () => sock.write(`${auth}PING\r\nINFO server\r\n`));
    sock.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      // Anything but +PONG (e.g. -LOADING while the AOF is replayed) means "not yet".
      if (buf.length >= expected.length && !buf.startsWith(expected)) return done(undefined);
      const m = /process_id:(\d+)\r\n/.exec(buf);
      if (m) done(Number(m[1]));
    });
  });
}
