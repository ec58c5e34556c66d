// A log file that pino writes into: lines are gathered in memory and written
// with one synchronous write every FLUSH_MS (or 64 KiB), so a busy actor costs
// one system call per batch, and flush() at stop always writes everything: the
// file is opened before the first line, so there is no "not ready yet" window.
// When the file would grow past maxBytes it is renamed to <file>.1 (older ones
// shift to .2 … .keep, the oldest is dropped) and a fresh file is opened, so a
// long run cannot fill the disk.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { errors } from '../base/errors.js';

export interface Rotation {
  /** size at which the file is rotated */
  maxBytes: number;
  /** rotated files kept besides the live one (<file>.1 newest … <file>.keep oldest) */
  keep: number;
}

export const DEFAULT_ROTATION: Rotation = { maxBytes: 10 * 1024 * 1024, keep: 3 };
const FLUSH_MS = 100;
const FLUSH_BYTES = 64 * 1024;

/** The rotation, with SKYQ_LOG_MAX_BYTES and SKYQ_LOG_KEEP overriding the defaults. */
export function rotationFromEnv(env: NodeJS.ProcessEnv = process.env): Rotation {
  const read = (name: string, fallback: number, min: number) => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min)
      throw errors.invalidOption(name, `expected a whole number ≥ ${min}`, text);
    return value;
  };
  return {
    maxBytes: read('SKYQ_LOG_MAX_BYTES', DEFAULT_ROTATION.maxBytes, 1024),
    keep: read('SKYQ_LOG_KEEP', DEFAULT_ROTATION.keep, 1),
  };
}

/** The rotated files of `file`, newest first (they may not all exist). */
export function rotatedFiles(file: string, keep: number): string[] {
  return Array.from({ length: keep }, (_, i) => `${file}.${i + 1}`);
}

export class RotatingFile {
  readonly path: string;
  readonly #rotation: Rotation;
  #fd: number;
  #size: number;
  #pending: string[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | null = null;
  #failed = false;
  readonly #onExit = () => this.close();

  constructor(path: string, rotation: Rotation = DEFAULT_ROTATION) {
    this.path = path;
    this.#rotation = rotation;
    mkdirSync(dirname(path), { recursive: true });
    this.#fd = openSync(path, 'a');
    this.#size = fstatSync(this.#fd).size;
    // A thread that ends (even by terminate()) writes what it logged and gives its fd back:
    // file descriptors belong to the process, and actors are restarted within it.
    process.on('exit', this.#onExit);
  }

  /** pino's destination interface. */
  write(chunk: string): boolean {
    this.#pending.push(chunk);
    this.#pendingBytes += Buffer.byteLength(chunk);
    if (this.#pendingBytes >= FLUSH_BYTES) this.flush();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.#timer.unref();
    }
    return true;
  }

  /** Writes every pending line now; pino's logger.flush(cb) calls it too. */
  flush(callback?: (error?: Error) => void): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const lines = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    if (lines.length > 0 && this.#fd >= 0) {
      try {
        this.#writeLines(lines);
      } catch (error) {
        // A full disk must not crash the actor: say so once, keep consuming.
        if (!this.#failed)
          process.stderr.write(`skyq: cannot write ${this.path}: ${(error as Error).message}\n`);
        this.#failed = true;
      }
    }
    callback?.();
  }

  /** One write per file: a batch that would pass maxBytes is split at a line and rotated. */
  #writeLines(lines: string[]): void {
    let batch: Buffer[] = [];
    let batchBytes = 0;
    for (const text of lines) {
      const bytes = Buffer.from(text);
      const used = this.#size + batchBytes;
      if (used > 0 && used + bytes.length > this.#rotation.maxBytes) {
        this.#writeAll(Buffer.concat(batch));
        batch = [];
        batchBytes = 0;
        this.#rotate();
      }
      batch.push(bytes);
      batchBytes += bytes.length;
    }
    this.#writeAll(Buffer.concat(batch));
  }

  #writeAll(data: Buffer): void {
    for (let at = 0; at < data.length; ) at += writeSync(this.#fd, data, at);
    this.#size += data.length;
  }

  close(): void {
    this.flush();
    process.off('exit', this.#onExit);
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }

  #rotate(): void {
    closeSync(this.#fd);
    this.#fd = -1;
    const older = rotatedFiles(this.path, this.#rotation.keep);
    for (let i = older.length - 1; i > 0; i--)
      renameIfThere(older[i - 1] as string, older[i] as string);
    renameIfThere(this.path, older[0] as string);
    this.#fd = openSync(this.path, 'a');
    this.#size = fstatSync(this.#fd).size;
  }
}

/** Another process sharing the directory may have rotated first: a missing file is fine. */
function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
