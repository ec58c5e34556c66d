// Which function handles a message: the user's module (default export), the
// shared piscina pool, or the default handler that logs each message as
// consumed, like the original demo.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errors } from '../errors.js';
import type { Message } from '../message.js';
import type { Handler } from './actor.js';
import type { Logger } from './logger.js';

/** A handler module path (relative to cwd) or file URL, as a file URL. */
export function handlerUrl(spec: string): string {
  if (spec.startsWith('file:')) return spec;
  return pathToFileURL(isAbsolute(spec) ? spec : resolve(spec)).href;
}

export async function importHandler(url: string): Promise<Handler> {
  let module: { default?: unknown };
  try {
    module = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw errors.actor(`cannot load handler ${url}: ${(error as Error).message}`, error);
  }
  if (typeof module.default !== 'function') {
    throw errors.actor(`handler ${url} must export a default function (async (job) => {})`);
  }
  return module.default as Handler;
}

export function defaultHandler(log: Logger): Handler {
  return (job: Message) => {
    const lateMs = Math.round(Date.now() - job.dueAt);
    log.info({ event: 'consumed', job: job.id, body: job.body, lateMs }, 'consumed');
  };
}

/** The pool runs the user's module on piscina threads; they get the job only. */
export interface PoolApi {
  run(job: Message): Promise<void>;
}

export function poolHandler(pool: { run(job: Message): Promise<void> }): Handler {
  return (job: Message) => pool.run(job);
}

/**
 * Calls the handler. Without a time limit it is a plain call (a handler that returns at once
 * costs no promise); with one, the handler races a timer that aborts its own signal.
 */
export function invokeHandler(
  handler: Handler,
  job: Message,
  shutdown: AbortSignal,
  own: AbortController | null,
  timeoutMs: number,
): unknown {
  if (!own || timeoutMs <= 0) return handler(job, { signal: shutdown });
  const signal = AbortSignal.any([own.signal, shutdown]);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      own.abort();
      reject(new Error(`handler timed out after ${timeoutMs} ms`));
    }, timeoutMs);
  });
  const run = Promise.resolve().then(() => handler(job, { signal }));
  return Promise.race([run, timeout]).finally(() => clearTimeout(timer));
}
