// Where `skyq logs` reads: each writer (an actor, the launcher, its intake) has a live
// file (actor-3.log) and the rotated ones before it (actor-3.log.1 newest …).
// History is read oldest file first and the writers are merged by time
// without loading the files into memory.
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { lineTime } from './log-format.js';

const LOG_NAME = /^((?:actor-\d+|launcher|intake)\.log)(?:\.(\d+))?$/;

export interface LogSource {
  /** the live file */
  live: string;
  /** rotated files, oldest first */
  rotated: string[];
}

export interface TimedLine {
  time: number;
  text: string;
}

/** Every writer's files in `dir`; only `liveName`'s when given. */
export function findSources(dir: string, liveName?: string): LogSource[] {
  const byLive = new Map<string, { n: number; file: string }[]>();
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const match = LOG_NAME.exec(name);
    if (!match) continue;
    const [, live, n] = match as unknown as [string, string, string | undefined];
    if (liveName !== undefined && live !== liveName) continue;
    const list = byLive.get(live) ?? [];
    if (n !== undefined) list.push({ n: Number(n), file: join(dir, name) });
    byLive.set(live, list);
  }
  return [...byLive.entries()]
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .map(([live, list]) => ({
      live: join(dir, live),
      rotated: list.sort((a, b) => b.n - a.n).map((entry) => entry.file),
    }));
}

/** Size of the live files now: history stops there and following starts there. */
export function liveSizes(sources: LogSource[]): Map<string, number> {
  return new Map(
    sources.map((source) => [
      source.live,
      existsSync(source.live) ? statSync(source.live).size : 0,
    ]),
  );
}

async function* linesOf(file: string, end?: number): AsyncGenerator<TimedLine> {
  if (!existsSync(file) || end === 0) return;
  const input = createReadStream(file, end === undefined ? {} : { end: end - 1 });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const text of lines) if (text !== '') yield { time: lineTime(text), text };
}

async function* linesOfSource(source: LogSource, liveEnd: number): AsyncGenerator<TimedLine> {
  for (const file of source.rotated) yield* linesOf(file);
  yield* linesOf(source.live, liveEnd);
}

/** All lines of all sources in time order (each file is already in order: a k-way merge). */
export async function* mergedHistory(
  sources: LogSource[],
  sizes: Map<string, number>,
): AsyncGenerator<TimedLine> {
  const iterators = sources.map((source) => linesOfSource(source, sizes.get(source.live) ?? 0));
  const heads = await Promise.all(iterators.map((it) => it.next()));
  for (;;) {
    let best = -1;
    heads.forEach((head, i) => {
      if (head.done) return;
      const current = heads[best];
      if (best < 0 || (current && !current.done && head.value.time < current.value.time)) best = i;
    });
    if (best < 0) return;
    const chosen = heads[best] as IteratorYieldResult<TimedLine>;
    yield chosen.value;
    heads[best] = await (iterators[best] as AsyncGenerator<TimedLine>).next();
  }
}
