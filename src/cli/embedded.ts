// `skyq start` with no Redis named: use 127.0.0.1:6379 when a Redis without a
// password answers there; otherwise run skyq's own private redis-server on that
// port, with its data, a generated password and a note of who runs it under
// ./.skyq/ (./.skyq/<port>/ for another port: embedded-dir.ts; dir 0700, files 0600). Its URL
// also goes in a per-user note (src/redis/default-redis.ts), which other commands and the
// library read when no Redis is named: `skyq produce` in a second terminal, from any folder,
// and `new Queue()` find the server with nothing named.
//
// The server is stopped or reused deliberately: the `skyq start` that started
// (or adopted) it stops it when it stops; one left running by a launcher that
// was killed is adopted by the next `skyq start` ("reusing ..."), and a second
// launcher next to a running one shares it without stopping it.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { errors } from '../base/errors.js';
import {
  alive,
  type EmbeddedNote,
  notePath,
  readEmbeddedNote,
  removeEmbeddedNote,
  writeEmbeddedNote,
} from '../redis/default-redis.js';
import { REDIS_INSTALL_HINT, redisServerAvailable, startRedisServer } from '../redis/server.js';
import { DEFAULT_EMBEDDED_PORT, embeddedDir, embeddedPort } from './embedded-dir.js';

const PASSWORD_FILE = 'redis-password';
const OWNER_FILE = 'embedded.json';

export interface EmbeddedRedis {
  /** where to connect (with the password when it is skyq's server) */
  url: string;
  /** a Redis of yours, skyq's server started now, adopted from a dead launcher, or shared */
  kind: 'yours' | 'started' | 'reused' | 'shared';
  /** the folder with skyq's server's data (not for a Redis of yours) */
  dir?: string;
  /**
   * stops the server when this process owns it, and when no other launcher still uses it;
   * resolves true when it stopped it
   */
  stop(): Promise<boolean>;
}

interface Where {
  port?: number;
  dir?: string;
}

/** The saved password of the embedded server in `dir` (default: the embedded port's), if one was ever made. */
export function savedPassword(dir = embeddedDir()): string | undefined {
  try {
    return readFileSync(join(resolve(dir), PASSWORD_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The URL commands use when no Redis is named: the running embedded server's (its note, from
 * any folder), else 127.0.0.1 at the embedded port with the password saved in ./.skyq (a server
 * an older skyq started, which wrote no note), if any. With `dir`: that folder's password.
 */
export function defaultEmbeddedUrl(where: Where = {}): string {
  const port = where.port ?? embeddedPort();
  const note = where.dir === undefined ? readEmbeddedNote(port) : undefined;
  if (note) return note.url;
  const password = savedPassword(where.dir ?? embeddedDir(port));
  const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
  return `redis://${auth}127.0.0.1:${port}`;
}

type Knock = 'pong' | 'noauth' | 'wrongpass' | 'down';

/** What a Redis at the address says to a PING (with `password` when given). */
export async function knock(port: number, password?: string, timeoutMs = 1000): Promise<Knock> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    ...(password === undefined ? {} : { password }),
    lazyConnect: true,
    enableReadyCheck: false,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // A refused AUTH is emitted as an event; the PING then only sees a closed connection.
  let refusal = '';
  client.on('error', (error: Error) => {
    refusal ||= error.message;
  });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG' ? 'pong' : 'down';
  } catch (error) {
    const message = `${refusal} ${(error as Error).message}`;
    if (/\bNOAUTH\b/.test(message)) return 'noauth';
    if (/\bWRONGPASS\b/.test(message)) return 'wrongpass';
    return 'down';
  } finally {
    client.disconnect();
  }
}

export async function embeddedRedis(
  say: (line: string) => void,
  where: Where = {},
): Promise<EmbeddedRedis> {
  const port = where.port ?? embeddedPort();
  const dir = resolve(where.dir ?? embeddedDir(port));
  const shown = `redis://127.0.0.1:${port}`;
  const first = await knock(port);
  if (first === 'pong') {
    // Plainly, since it may be a shared server that is not meant for this queue.
    say(
      `skyq: using the existing Redis at ${shown} (it answered without a password; skyq did not start it). Name another with --redis, or set SKYQ_EMBEDDED_PORT for skyq's own`,
    );
    return { url: shown, kind: 'yours', stop: async () => false };
  }
  if (first !== 'down') return adopt(say, port, dir);
  if (!redisServerAvailable()) {
    throw errors.redis(`no Redis answers at ${shown} and ${REDIS_INSTALL_HINT}`);
  }
  makePrivate(dir);
  const password = passwordIn(dir);
  const server = await startRedisServer({
    port,
    dir,
    appendonly: true,
    password,
    privateFiles: true,
    detached: true,
  }).catch(async (error: Error) => {
    // Another `skyq start` may have started it a moment ago: then share or adopt that one.
    if (/already in use/.test(error.message) && (await knock(port)) !== 'down') return null;
    const why = /already in use/.test(error.message)
      ? 'the port is taken by a program that is not Redis (set SKYQ_EMBEDDED_PORT, or name a Redis with --redis)'
      : (error.message.split('\n')[0] ?? error.message);
    throw errors.redis(`could not start the embedded redis-server on port ${port}: ${why}`, error);
  });
  if (server === null) return embeddedRedis(say, where);
  writeOwner(dir, server.pid);
  say(
    `skyq: no Redis answered at ${shown}; started a private redis-server there (pid ${server.pid}, data and password in ${dir})`,
  );
  leaveNote(say, port, { url: server.url, pid: server.pid, dir });
  return {
    url: server.url,
    kind: 'started',
    dir,
    stop: () =>
      stopUnlessShared(
        say,
        server.url,
        () => server.stop(),
        port,
        server.pid,
        () => server.leave(),
      ),
  };
}

/** The per-user note every command and `new Queue()` with no Redis named finds the server by. */
function leaveNote(say: (line: string) => void, port: number, note: EmbeddedNote): void {
  try {
    writeEmbeddedNote(port, note);
  } catch (error) {
    say(
      `skyq: could not write ${notePath(port)} (${(error as Error).message}): other folders will not find this server`,
    );
    return;
  }
  const also = port === DEFAULT_EMBEDDED_PORT ? '' : ` (with SKYQ_EMBEDDED_PORT=${port} set)`;
  say(
    `skyq: from any folder, commands and new Queue() with no Redis named use this server${also}: its address is in ${notePath(port)}; eval "$(npx skyq env)" exports it as REDIS_URL`,
  );
}

/**
 * A password-protected Redis is at the port: skyq's own from an earlier run or another folder
 * (its note says where), or not ours.
 */
async function adopt(
  say: (line: string) => void,
  port: number,
  here: string,
): Promise<EmbeddedRedis> {
  const note = readEmbeddedNote(port);
  // The note names the server's own folder, wherever it was started.
  const dir = note?.dir ?? here;
  const password = note ? decodeURIComponent(new URL(note.url).password) : savedPassword(dir);
  const answer = password === undefined ? 'noauth' : await knock(port, password);
  if (answer !== 'pong' || password === undefined) {
    throw errors.redis(
      `a Redis at redis://127.0.0.1:${port} asks for a password that ${dir}/${PASSWORD_FILE} does not hold: name it with --redis redis://:<password>@127.0.0.1:${port} (or REDIS_URL)`,
    );
  }
  const url = note?.url ?? defaultEmbeddedUrl({ port, dir });
  const pid = note?.pid ?? (await serverPid(url));
  const owner = readOwner(dir);
  if (owner !== undefined && owner.launcher !== process.pid && alive(owner.launcher)) {
    const from = dir === here ? '' : `, data in ${dir}`;
    say(`skyq: sharing the embedded server of the running launcher (pid ${owner.launcher})${from}`);
    if (!note) writeEmbeddedNote(port, { url, pid, dir });
    return { url, kind: 'shared', dir, stop: async () => false };
  }
  writeOwner(dir, pid);
  say(`skyq: reusing the embedded server from an earlier run (pid ${pid}, data in ${dir})`);
  leaveNote(say, port, { url, pid, dir });
  return {
    url,
    kind: 'reused',
    dir,
    stop: () => stopUnlessShared(say, url, () => shutdown(url), port, pid),
  };
}

/** The data dir 0700 and everything in it 0600 (older versions left them world-readable). */
function makePrivate(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const walk = (path: string) => {
    const stat = statSync(path);
    chmodSync(path, stat.isDirectory() ? 0o700 : 0o600);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
}

function passwordIn(dir: string): string {
  const existing = savedPassword(dir);
  if (existing !== undefined) return existing;
  const password = randomBytes(24).toString('hex');
  writeFileSync(join(dir, PASSWORD_FILE), `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

interface Owner {
  /** the redis-server */
  pid: number;
  /** the `skyq start` process that stops it */
  launcher: number;
}

function writeOwner(dir: string, pid: number): void {
  const owner: Owner = { pid, launcher: process.pid };
  writeFileSync(join(dir, OWNER_FILE), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

function readOwner(dir: string): Owner | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

async function withClient<T>(url: string, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

async function serverPid(url: string): Promise<number> {
  const info = await withClient(url, (c) => c.info('server'));
  return Number(/process_id:(\d+)/.exec(info)?.[1] ?? 0);
}

/** Another launcher's connections (coordinator, actors' waits) are still open: it needs the server. */
async function othersConnected(url: string): Promise<boolean> {
  const list = (await withClient(url, (c) => c.call('CLIENT', 'LIST'))) as string;
  // flags containing "c": closing after its reply (our own launcher's QUIT).
  return list
    .split('\n')
    .some(
      (line) => /\bname=skyq-(coordinator|wake-\d+)\b/.test(line) && !/\bflags=\S*c/.test(line),
    );
}

/** Stops the server unless another launcher uses it; true when it stopped it (and its note went). */
async function stopUnlessShared(
  say: (line: string) => void,
  url: string,
  stop: () => Promise<void>,
  port: number,
  pid: number,
  leave: () => void = () => undefined,
): Promise<boolean> {
  if (await othersConnected(url).catch(() => false)) {
    // Left running for good: this process's exit must not stop it either (server.ts's hook).
    leave();
    say('skyq: leaving the embedded server running: another launcher still uses it');
    return false;
  }
  await stop();
  removeEmbeddedNote(port, pid);
  return true;
}

/** Stops a server this process did not start (no child handle): SHUTDOWN flushes the AOF. */
async function shutdown(url: string): Promise<void> {
  const port = Number(new URL(url).port);
  await withClient(url, (c) => c.call('SHUTDOWN')).catch(() => undefined);
  const deadline = Date.now() + 10_000;
  while ((await knock(port, undefined, 200)) !== 'down' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
}
