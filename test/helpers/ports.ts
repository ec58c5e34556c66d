/**
 * Ports held for a test's servers across every process of a run. Finding a free port and binding
 * it later leaves a window in which another test file (another process) can take it, and a test
 * that restarts a server on its port after an outage leaves a window of seconds. So a port is
 * held by a lock file (`<tmpdir>/skyq-test-ports/<port>`, made with O_EXCL, holding the owner's
 * pid) for as long as the holder wants it, and only taken from a range below the kernel's
 * ephemeral ports (32768-60999 on Linux), where no client's outgoing connection can land on it.
 * A lock whose pid is gone (a killed run) is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCKS = join(tmpdir(), 'skyq-test-ports');
/** Standalone and cluster ports; a cluster's bus (port + 10000) then lies in 20000-29999. */
const LOW = 10_000;
const HIGH = 19_999;
const BUS_OFFSET = 10_000;

const mine = new Set<number>();
process.on('exit', () => {
  for (const port of mine) rmSync(join(LOCKS, String(port)), { force: true });
});

/** Whether process `pid` is running (a lock's holder that died leaves its lock behind). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock file of `port`, or says it belongs to a live holder. */
function lock(port: number): boolean {
  const file = join(LOCKS, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      mine.add(port);
      return true;
    } catch {
      let owner = Number.NaN;
      try {
        owner = Number(readFileSync(file, 'utf8'));
      } catch {
        continue; // released meanwhile: try again
      }
      // An empty file is a holder between creating and writing it: leave it alone.
      if (!Number.isInteger(owner) || owner <= 0 || processAlive(owner)) return false;
      rmSync(file, { force: true }); // a dead run's lock
    }
  }
  return false;
}

function unlock(port: number): void {
  if (mine.delete(port)) rmSync(join(LOCKS, String(port)), { force: true });
}

/** Whether nothing listens on `port` right now (a server outside this scheme). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface HeldPort {
  port: number;
  /** gives the port back (it is given back at process exit anyway) */
  release(): void;
}

/**
 * A port no other holder gets until released, bindable now; with `withBus`, port + 10000 (the
 * cluster bus) is held and bindable too.
 */
export async function holdPort(opts: { withBus?: boolean } = {}): Promise<HeldPort> {
  mkdirSync(LOCKS, { recursive: true });
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    const wanted = opts.withBus ? [port, port + BUS_OFFSET] : [port];
    const taken: number[] = [];
    for (const p of wanted) if (lock(p)) taken.push(p);
    if (taken.length === wanted.length) {
      const free = await Promise.all(wanted.map(bindable));
      if (free.every(Boolean)) {
        return { port, release: () => wanted.forEach(unlock) };
      }
    }
    taken.forEach(unlock);
  }
  throw new Error(`no free port held in ${LOW}-${HIGH} after 500 attempts`);
}

/** A held port, kept until the process exits: for a server restarted on the same port. */
export async function heldPort(opts: { withBus?: boolean } = {}): Promise<number> {
  return (await holdPort(opts)).port;
}
