// What the CLI prints when a command fails: one readable line, never a
// password. Redis trouble (unreachable, NOPERM, a reply error) is explained;
// only an unexpected error (a bug) keeps its stack, redacted too.
import { SkyqError } from '../base/errors.js';
import { redactText } from '../base/redact.js';
import { explainRedisError } from '../redis/explain.js';
import { withoutScriptLocation } from './preview.js';

/** Errors Redis or ioredis made: their message says it all, a stack adds only noise. */
const REDIS_ERROR_NAMES = new Set([
  'ReplyError',
  'MaxRetriesPerRequestError',
  'AbortError',
  'ClusterAllFailedError',
  'ParserError',
]);

export function cliErrorLine(error: unknown, prefix = 'task_group'): string {
  // Explained when it happened; asked again now, the reason may be more precise.
  const again =
    error instanceof SkyqError && error.code === 'ERR_SKYQ_UNREACHABLE'
      ? explainRedisError(error.cause, prefix)
      : undefined;
  const explained = again instanceof SkyqError ? again : explainRedisError(error, prefix);
  if (explained instanceof SkyqError) return redactText(withoutScriptLocation(explained.message));
  if (!(explained instanceof Error)) return redactText(String(explained));
  if (REDIS_ERROR_NAMES.has(explained.name) || /^[A-Z]+ /.test(explained.message))
    return redactText(withoutScriptLocation(explained.message.split('\n')[0] ?? ''));
  return redactText(explained.stack ?? explained.message);
}
