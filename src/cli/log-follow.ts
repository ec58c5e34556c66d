// `skyq logs --follow`: polls every live file for new lines and prints them in
// time order across writers. Writers batch their lines (up to 100 ms), so a
// line is held HOLD_MS before it is printed: a later-written line with an
// earlier time from another writer still comes out first. A file that was
// rotated meanwhile is read to its end (as <file>.1) before its successor.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { lineTime } from './log-format.js';
import { findSources, type LogSource, type TimedLine } from './log-sources.js';

const POLL_MS = 200;
const EMPTY = Buffer.alloc(0);
export const HOLD_MS = 600;

interface Tracked {
  offset: number;
  /** inode of the file read so far: another one at the path means it was rotated */
  ino: number;
  /** bytes after the last newline (a line being written, or a character cut in two) */
  partial: Buffer;
}

export interface FollowOptions {
  dir: string;
  /** only this writer's file (e.g. actor-3.log), else every writer, new ones included */
  liveName?: string;
  /** where history reading stopped, per live file */
  startSizes: Map<string, number>;
  print(line: TimedLine): void;
}

export class LogFollower {
  readonly #options: FollowOptions;
  readonly #files = new Map<string, Tracked>();
  #held: TimedLine[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(options: FollowOptions) {
    this.#options = options;
    for (const [live, size] of options.startSizes) {
      const ino = existsSync(live) ? statSync(live).ino : 0;
      this.#files.set(live, { offset: size, ino, partial: EMPTY });
    }
  }

  start(): void {
    this.#timer = setInterval(() => this.poll(Date.now() - HOLD_MS), POLL_MS);
  }

  /** Prints what is held, then stops polling. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.poll(Number.POSITIVE_INFINITY);
  }

  /** Reads new lines and prints the held ones older than `until`. */
  poll(until: number): void {
    for (const source of this.#sources()) {
      if (!this.#files.has(source.live))
        this.#files.set(source.live, { offset: 0, ino: 0, partial: EMPTY });
    }
    for (const [live, tracked] of this.#files) this.#read(live, tracked);
    // Stable sort: lines of one writer with equal times keep their order.
    this.#held.sort((a, b) => a.time - b.time);
    const ready = this.#held.findIndex((line) => line.time > until);
    const out = ready < 0 ? this.#held : this.#held.slice(0, ready);
    this.#held = ready < 0 ? [] : this.#held.slice(ready);
    for (const line of out) this.#options.print(line);
  }

  #sources(): LogSource[] {
    return findSources(this.#options.dir, this.#options.liveName);
  }

  #read(live: string, tracked: Tracked): void {
    if (!existsSync(live)) return;
    const now = statSync(live);
    if (tracked.ino !== 0 && now.ino !== tracked.ino) {
      // Rotated: finish the old file (now <file>.1) before starting the new one.
      const old = `${live}.1`;
      if (existsSync(old) && statSync(old).ino === tracked.ino) this.#take(old, tracked);
      tracked.offset = 0;
      tracked.partial = EMPTY;
    } else if (now.size < tracked.offset) {
      tracked.offset = 0; // truncated
    }
    tracked.ino = now.ino;
    this.#take(live, tracked);
  }

  #take(file: string, tracked: Tracked): void {
    const size = statSync(file).size;
    if (size <= tracked.offset) return;
    const buffer = Buffer.alloc(size - tracked.offset);
    const fd = openSync(file, 'r');
    try {
      for (let at = 0; at < buffer.length; ) {
        const read = readSync(fd, buffer, at, buffer.length - at, tracked.offset + at);
        if (read === 0) break;
        at += read;
      }
    } finally {
      closeSync(fd);
    }
    tracked.offset = size;
    const bytes = Buffer.concat([tracked.partial, buffer]);
    const end = bytes.lastIndexOf(0x0a) + 1;
    tracked.partial = bytes.subarray(end);
    for (const text of bytes.subarray(0, end).toString('utf8').split('\n'))
      if (text !== '') this.#held.push({ time: lineTime(text), text });
  }
}
