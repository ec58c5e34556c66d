// Runs a script by its SHA first, and sends its text only when the server answers NOSCRIPT
// (a fresh server, one restarted empty, a promoted replica, SCRIPT FLUSH). ioredis's
// defineCommand sends every script's first call on each connection as EVAL with the whole
// text, whatever the server holds: a group script is ~60 KB, and ten actors each sent every
// script they run that way at their start (56 EVALs, ~30 ms of Redis in a seed), again after
// each reconnect. Now a server gets a script's text about once.
import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';

/** A script's text and its SHA1, as EVALSHA names it. */
export interface ScriptText {
  readonly lua: string;
  readonly sha: string;
}

export function scriptText(lua: string): ScriptText {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

type ScriptMethod = (...args: (string | number | Buffer)[]) => Promise<unknown>;

const isNoScript = (error: unknown) =>
  error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * EVALSHA of `script` with `args` (the key count, the keys, then the arguments), EVAL when the
 * server does not have it. `buffers`: the reply's strings come as Buffers (exact bytes).
 */
export function callScript(
  client: RedisClient,
  script: ScriptText,
  args: (string | number | Buffer)[],
  buffers: boolean,
): Promise<unknown> {
  // The commands' own methods: `call('evalsha', …)` loses its command name on the way into an
  // auto-pipeline (ioredis 5.9), and the Buffer variants have no types.
  const methods = client as unknown as Record<string, ScriptMethod>;
  const send = (command: 'evalsha' | 'eval', first: string) =>
    (methods[buffers ? `${command}Buffer` : command] as ScriptMethod).call(client, first, ...args);
  return send('evalsha', script.sha).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    return send('eval', script.lua);
  });
}
