// Which function handles a message: the user's module (default export), the
// shared piscina pool, or the default handler that logs each message as
// consumed, like the original demo.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errors } from '../errors.js';
import type { Message } from '../message.js';
import type { Handler, JobContext } from './actor-types.js';
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
 * The pool runs the user's module on piscina threads; they get the job and how late it
 * started. A pool task cannot be told to stop: its signal never aborts.
 */
export interface PoolApi {
  run(job: Message, lateMs: number): Promise<void>;
}

export function poolHandler(pool: PoolApi): Handler {
  return (job: Message, { lateMs }: JobContext) => pool.run(job, lateMs);
}
