// Which Redis a client uses when none is named (no redis, cluster, sentinel or connection
// option; no --redis, --cluster or --sentinel flag). The library and the CLI follow one rule:
//   1. REDIS_URL, when set;
//   2. else the embedded server that `skyq start` runs for itself on the embedded port
//      (SKYQ_EMBEDDED_PORT, default 6379), found through its note;
//   3. else redis://127.0.0.1:<embedded port>.
//
// The note: `skyq start` writes, for each embedded server it starts or adopts, a file only its
// owner can read at a place every folder and terminal of that user finds:
// $XDG_STATE_HOME/skyq/<port>.json (default ~/.local/state/skyq/<port>.json), holding the
// server's URL with its password, its pid and its data folder. A note whose server is gone
// (killed with the machine, say) is ignored, so a stale one never hides the plain default.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { errors } from '../base/errors.js';

export const DEFAULT_EMBEDDED_PORT = 6379;

/** What the note of an embedded server holds. */
export interface EmbeddedNote {
  /** where to connect, password included */
  url: string;
  /** the redis-server's pid: the note holds only while it runs */
  pid: number;
  /** the folder with its data, password and owner (./.skyq of the folder it started in) */
  dir: string;
}

/** The embedded server's port: 6379, or SKYQ_EMBEDDED_PORT (when 6379 belongs to another program). */
export function embeddedPort(): number {
  const text = process.env.SKYQ_EMBEDDED_PORT;
  if (text === undefined || text === '') return DEFAULT_EMBEDDED_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port <= 0 || port > 65535)
    throw errors.invalidOption('SKYQ_EMBEDDED_PORT', 'must be a port number', text);
  return port;
}

/** The folder of the notes: $XDG_STATE_HOME/skyq, or ~/.local/state/skyq. */
export function notesDir(): string {
  const state = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'skyq');
}

/** Where the note of the embedded server on `port` lives. */
export function notePath(port = embeddedPort()): string {
  return join(notesDir(), `${port}.json`);
}

/** The note of the embedded server on `port`, while that server runs. */
export function readEmbeddedNote(port = embeddedPort()): EmbeddedNote | undefined {
  let note: Partial<EmbeddedNote>;
  try {
    note = JSON.parse(readFileSync(notePath(port), 'utf8')) as Partial<EmbeddedNote>;
  } catch {
    return undefined; // none, or not ours to read
  }
  const { url, pid, dir } = note;
  if (typeof url !== 'string' || typeof dir !== 'string') return undefined;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  return alive(pid) ? { url, pid, dir } : undefined;
}

/** Writes the note (0600, in a 0700 folder), whole or not at all. */
export function writeEmbeddedNote(port: number, note: EmbeddedNote): void {
  const dir = notesDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = notePath(port);
  const temporary = `${path}.${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify(note)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Removes the note of the server `pid` (a newer server's note stays). */
export function removeEmbeddedNote(port: number, pid: number): void {
  try {
    const note = JSON.parse(readFileSync(notePath(port), 'utf8')) as Partial<EmbeddedNote>;
    if (note.pid === pid) rmSync(notePath(port), { force: true });
  } catch {
    // no note: nothing to remove
  }
}

/** The URL a client uses when no Redis is named (the rule at the top of this file). */
export function defaultRedisUrl(): string {
  const named = process.env.REDIS_URL;
  if (named) return named;
  const port = embeddedPort();
  return readEmbeddedNote(port)?.url ?? `redis://127.0.0.1:${port}`;
}

/** The process runs (a zombie nobody reaped yet does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc here: trust the signal
  }
}
