// Turns what Redis or ioredis throws into a SkyqError a person can act on:
// NOPERM names the ACL rule a skyq user needs, a lost connection names the
// target and the reason. Anything else is passed through unchanged.
import { errors, SkyqError } from '../base/errors.js';
import { scrubError } from '../base/redact.js';
import { aclSetUser } from './acl.js';
import { explainConnectionError, type RedisClient } from './connection.js';

/**
 * NOPERM, or its form for a command a Lua script calls: "ERR The user executing
 * the script can't run this command…" (or access a key, or publish).
 */
export function isNoPermission(error: unknown): error is Error {
  return (
    error instanceof Error &&
    /^(NOPERM\b|ERR The user executing the script can't)/.test(error.message)
  );
}

/** A script's refusal of newer data (lua/format-guard.lua): the key and both formats. */
export function formatRefusal(error: unknown) {
  const match =
    error instanceof Error &&
    /skyq: data format (\d+) in (\S+) is newer than this skyq \(format (\d+)\)/.exec(error.message);
  if (!match) return null;
  return { key: match[2] as string, stored: Number(match[1]), known: Number(match[3]) };
}

/**
 * The format a refusal for a newer data format names: a script's own refusal, or skyq's
 * ERR_SKYQ_FORMAT made of one ('?' when its cause does not say); null for any other error.
 */
export function newerFormatOf(error: unknown): number | '?' | null {
  const refusal = formatRefusal(error);
  if (refusal) return refusal.stored;
  if (!(error instanceof SkyqError) || error.code !== 'ERR_SKYQ_FORMAT') return null;
  return formatRefusal(error.cause)?.stored ?? '?';
}

/** The error to throw instead of `error`, for a queue of `prefix` (on `client`, when known). */
export function explainRedisError(error: unknown, prefix: string, client?: RedisClient): unknown {
  if (error instanceof SkyqError) return error;
  scrubError(error); // passed on as it is, or as a cause: no password inside either way
  const newer = formatRefusal(error);
  if (newer) return errors.formatTooNew(newer.key, newer.stored, newer.known, error);
  if (isNoPermission(error)) {
    // The script's sha and line say nothing to a reader.
    const reply = (error.message.split('\n')[0] ?? error.message)
      .replace(/ script: [0-9a-f]{40}, on @user_script:\d+\.?$/, '')
      .replace(/\.$/, '');
    return errors.noPermission(reply, aclSetUser(prefix), error);
  }
  return explainConnectionError(error, client) ?? error;
}
