// Which function handles a message: the user's module (default export), the
// shared piscina pool, or the default handler that logs each message as
// consumed, like the original demo.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errors } from '../base/errors.js';
import { UnserialisableResult } from '../queue/history/result.js';
import type { Message } from '../queue/message.js';
import { readThrown } from '../queue/thrown.js';
import type { Handler, JobContext } from './actor-types.js';
import { importModule, shownHandler } from './handler-load.js';
import type { Logger } from './logger.js';
import { PoolReports } from './pool-reports.js';

/** A handler module path (relative to cwd) or file URL, as a file URL. */
export function handlerUrl(spec: string): string {
  if (spec.startsWith('file:')) return spec;
  return pathToFileURL(isAbsolute(spec) ? spec : resolve(spec)).href;
}

/**
 * A handler module exports a default function, which handles every job, or a command table
 * (skynet's `CMD[cmd]`): a default object, or named exports, of functions by job name, with
 * '*' for any other name (and for unnamed jobs).
 */
export async function importHandler(url: string): Promise<Handler> {
  const module = (await importModule(url)).exports;
  if (typeof module.default === 'function') return module.default as Handler;
  const byDefault = typeof module.default === 'object' && module.default !== null;
  const table = byDefault ? (module.default as Record<string, unknown>) : module;
  const commands = new Map<string, Handler>();
  let notFunction: string | undefined;
  let entries: [string, unknown][];
  try {
    entries = Object.entries(table);
  } catch (error) {
    // A getter of a default object runs here: its throw names the module, as a load error does.
    throw errors.actor(
      `handler ${shownHandler(url)}: reading its exports threw: ${readThrown(error).message}`,
    );
  }
  for (const [name, value] of entries) {
    if (name === 'default') continue;
    if (typeof value === 'function') commands.set(name, value as Handler);
    else notFunction ??= name;
  }
  const notTable = (why: string) => errors.actor(`handler ${shownHandler(url)}${why}`);
  // A default object is a command table and nothing else; named exports may hold other values.
  if (notFunction !== undefined && byDefault) {
    throw notTable(
      `: \`${notFunction}\` is not a function (a command table maps job names to functions: { 'email.send': fn, '*': fallback })`,
    );
  }
  if (commands.size === 0) {
    const which = notFunction === undefined ? '' : `: \`${notFunction}\` is not a function`;
    throw notTable(
      ` must export a default function (async (job) => {}) or a command table ({ 'email.send': fn, '*': fallback })${which}`,
    );
  }
  return commandTable(commands);
}

/**
 * Routes each job to the entry of its name, else '*'. A job neither handles throws the
 * no-handler error, which the actor turns into a dead letter with that reason (not retried).
 */
export function commandTable(commands: ReadonlyMap<string, Handler>): Handler {
  const fallback = commands.get('*');
  return (job: Message, context: JobContext) => {
    const run = (job.name === undefined ? undefined : commands.get(job.name)) ?? fallback;
    if (!run) throw errors.noHandler(job.name);
    return run(job, context);
  };
}

export function defaultHandler(log: Logger): Handler {
  return (job: Message, { lateMs }: JobContext) => {
    log.info({
      event: 'consumed',
      job: job.id,
      body: job.body,
      lateMs: Math.round(lateMs * 10) / 10,
    });
  };
}

/**
 * How a job ended on the pool: null when it resolved to nothing, its result, why its result
 * could not come back, or what it threw (and its code and stack).
 */
export type PoolOutcome =
  | null
  | { result: unknown }
  | { unserialisable: string }
  | { name: string; message: string; code?: string; stack?: string };

/** A job sent to the pool: how late it started, and the ref its reports carry (pool-reports.ts). */
export type PoolJob = [job: Message, lateMs: number, ref: number];

/** What a pool task answers: an outcome for each job, and, when any reported, how many calls each made. */
export interface PoolReply {
  outcomes: PoolOutcome[];
  reported?: number[];
}

/**
 * The pool runs the user's module on piscina threads; they get the job and how late it
 * started. A pool task cannot be told to stop: its signal never aborts. Its ctx.progress and
 * ctx.log calls come back on the channel named `reportTo` (pool-reports.ts).
 */
export interface PoolApi {
  /** runs the jobs on one pool thread, at once; an outcome for each, in order */
  run(jobs: PoolJob[], reportTo: string, task: number): Promise<PoolReply>;
  /**
   * Every job of the task was told to stop (its time limit, or shutdown): the task is dropped,
   * and a pool thread still running it is ended (piscina starts another in its place).
   */
  cancel(task: number): void;
}

/** A job waiting for its pool task, and how it ends. */
interface PoolEntry {
  job: PoolJob;
  signal: AbortSignal;
  settle: (outcome: PoolOutcome | Error) => void;
  /** set once its task is sent: it was aborted, or its outcome came ahead of the task's */
  ended?: (aborted: boolean) => void;
}

/** Most jobs in one pool task: large batches would keep the other pool threads idle. */
const POOL_BATCH = 32;

/**
 * Jobs started in one turn of the actor's event loop (a claim's batch, the timers that fired
 * together) go to the pool as one task per POOL_BATCH: a message costs a fraction of the two
 * thread hops (actor → launcher → pool thread, and back) instead of both.
 */
export function poolHandler(pool: PoolApi, log: Logger): Handler {
  const reports = new PoolReports(log);
  let tasks = 0;
  let waiting: PoolEntry[] = [];
  const flush = () => {
    const batch = waiting;
    waiting = [];
    for (let at = 0; at < batch.length; at += POOL_BATCH) {
      const part = batch.slice(at, at + POOL_BATCH);
      const task = ++tasks;
      // A pool thread cannot be told to stop, and one that never yields would be lost to the
      // pool for good (every later job timed out): once each job of the task was aborted (its
      // time limit, or shutdown) or came back ahead of it, with one aborted at least, the task
      // is cancelled, which ends that thread.
      let running = part.length;
      let told = false;
      const aborted: (() => void)[] = [];
      for (const entry of part) {
        let over = false;
        entry.ended = (abort) => {
          if (over) return;
          over = true;
          told ||= abort;
          if (--running === 0 && told) Promise.resolve(pool.cancel(task)).catch(() => undefined);
        };
        const onAbort = () => entry.ended?.(true);
        entry.signal.addEventListener('abort', onAbort, { once: true });
        aborted.push(() => entry.signal.removeEventListener('abort', onAbort));
      }
      const done = () => {
        for (const stop of aborted) stop();
      };
      pool
        .run(
          part.map((entry) => entry.job),
          reports.name,
          task,
        )
        .finally(done)
        .then(
          ({ outcomes, reported }) => {
            for (const [i, entry] of part.entries()) {
              const outcome = outcomes[i] ?? null;
              // A job that reported is settled once its reports are here (before its ack).
              reports.finish(entry.job[2], reported?.[i] ?? 0, () => entry.settle(outcome));
            }
          },
          (error: Error) => {
            for (const entry of part) reports.finish(entry.job[2], 0, () => entry.settle(error));
          },
        );
    }
  };
  return (job: Message, context: JobContext) =>
    new Promise<unknown>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(flush);
      const settle = (outcome: PoolOutcome | Error) => {
        if (outcome === null) resolve(undefined);
        else if (outcome instanceof Error) reject(outcome);
        else if ('result' in outcome) resolve(resultFromPool(outcome.result));
        else if ('unserialisable' in outcome)
          resolve(new UnserialisableResult(outcome.unserialisable));
        else {
          const { name, code, stack } = outcome;
          const error = Object.assign(new Error(outcome.message), code ? { name, code } : { name });
          // The pool thread's stack (the handler's frames), not this thread's.
          if (stack) error.stack = stack;
          reject(error);
        }
      };
      const entry: PoolEntry = {
        job: [job, context.lateMs, reports.track(context, early)],
        signal: context.signal,
        settle,
      };
      // Its outcome came ahead of its task's (handler-task.ts): settled now.
      function early(outcome: unknown) {
        entry.ended?.(false);
        settle(outcome as PoolOutcome);
      }
      waiting.push(entry);
    });
}

/** A Buffer a pool thread returned arrives as a plain Uint8Array: bytes again. */
function resultFromPool(result: unknown): unknown {
  return result instanceof Uint8Array && !Buffer.isBuffer(result)
    ? Buffer.from(result.buffer, result.byteOffset, result.length)
    : result;
}
