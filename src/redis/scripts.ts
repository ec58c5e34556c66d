// The Lua scripts, each in its own file under ../lua with a header naming its
// KEYS and ARGV. args.lua (the checks of ARGV) and format-guard.lua (the data format the
// script was written for) go first in every script; lib.lua, lib-ids.lua, previews.lua,
// events.lua, flow-lib.lua, history.lua and dedupe.lua are put in front of each group script (they all
// take one group's keys), and lib-held.lua in front of claim.lua and ratelimit-held.lua;
// the multi-group scripts have only args.lua and take their keys as given. ioredis sends a
// script's first call on each connection as EVAL, with its text, and EVALSHA after (EVAL again
// when the server answers NOSCRIPT): nothing is loaded beforehand, so a server compiles only
// the scripts its clients run.
import { readFileSync } from 'node:fs';
import { FORMAT_VERSION } from '../base/format-version.js';
import { KEY_NAMES } from '../base/keys.js';
import type { RedisClient } from './connection.js';
import { whileSlotMoves } from './slot-moves.js';

export const SCRIPT_NAMES = [
  'add',
  'claim',
  'ack',
  'fail',
  'extend',
  'release',
  'cancel',
  'reschedule',
  'inspect',
  'counts',
  'dead-list',
  'list',
  'list-counts',
  'dead-retry',
  'dead-purge',
  'pause',
  'time',
  'schedule-upsert',
  'schedule-advance',
  'schedule-remove',
  'schedule-list',
  'schedule-home',
  'spill-drop',
  'intake-dead',
  'id-block',
  'ratelimit-held',
  'report',
  'flow-add',
  'flow-child-done',
  'flow-sweep',
  'flow-children',
  'flow-states',
  'flow-taken',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * Scripts that stand alone: no lib.lua, any number of keys (over several groups at once, or a
 * key of their own such as `<prefix>:format`).
 */
export const MULTI_GROUP_SCRIPTS = [
  'watch-many',
  'format',
  'ratelimit-take',
  'ratelimit-list',
] as const;
export type MultiGroupScriptName = (typeof MULTI_GROUP_SCRIPTS)[number];

/** Every script takes the group's keys in the same order (see keys.ts). */
const NUMBER_OF_KEYS = KEY_NAMES.length;
const LUA_DIR = new URL('../lua/', import.meta.url);

/**
 * Helpers some group scripts share, put after lib.lua: the schedule scripts' (schedule-lib), the
 * rate limits' held messages (lib-held: the claim holds them back, ratelimit-held counts them),
 * the claim's own (claim-lib: remembered batches, due members), cancel's flow helpers (cancel-lib).
 */
function extraLibsOf(name: string): string[] {
  if (name.startsWith('schedule-')) return ['schedule-lib'];
  if (name === 'claim') return ['lib-held', 'claim-lib'];
  if (name === 'ratelimit-held') return ['lib-held'];
  if (name === 'cancel') return ['cancel-lib'];
  return [];
}

/** Each script's full text, made when first asked for: a thread uses a few of them. */
const sources = new Map<ScriptName | MultiGroupScriptName, string>();
const multiGroup = new Set<string>(MULTI_GROUP_SCRIPTS);
let libText: string | undefined;

const read = (name: string) => readFileSync(new URL(`${name}.lua`, LUA_DIR), 'utf8');

/** What every group script starts with (args.lua, the format guard, lib.lua and its kin). */
function lib(): string {
  libText ??= `${guarded(read('args'))}
${read('lib')}
${read('lib-ids')}
${read('previews')}
${read('events')}
${read('flow-lib')}
${read('history')}
${read('dedupe')}`;
  return libText;
}

function sourceOf(name: ScriptName | MultiGroupScriptName): string {
  let source = sources.get(name);
  if (source === undefined) {
    const own = read(name);
    // Helpers only some scripts need come after lib (extraLibsOf). Whether the script writes
    // decides whether lib.lua's format guard raises the group's format or only checks it.
    source = multiGroup.has(name)
      ? withArgChecks(own)
      : [writesLine(own), lib(), ...extraLibsOf(name).map(read), own].join('\n');
    sources.set(name, source);
  }
  return source;
}

/**
 * A group script says in its first line when it only reads (`-- inspect.lua (read only): …`):
 * such a script never raises the group's data format (lib.lua), so a newer skyq that only reads
 * leaves older launchers running. test/format-readers checks that none of those writes.
 */
export function readsOnly(lua: string): boolean {
  return /^--[^\n]*\(read only\)/.test(lua);
}

const writesLine = (lua: string) => `local SKYQ_WRITES = ${!readsOnly(lua)}`;

/**
 * A stand-alone script with args.lua in front, after its flags line if it has one (a
 * `#!lua` line must come first).
 */
export function withArgChecks(lua: string): string {
  const args = guarded(readFileSync(new URL('args.lua', LUA_DIR), 'utf8'));
  if (!lua.startsWith('#!')) return `${args}\n${lua}`;
  const lineEnd = lua.indexOf('\n');
  return `${lua.slice(0, lineEnd + 1)}${args}\n${lua.slice(lineEnd + 1)}`;
}

/** args.lua, then the format this script was written for and its guard (format-guard.lua). */
function guarded(args: string): string {
  const guard = readFileSync(new URL('format-guard.lua', LUA_DIR), 'utf8');
  return `${args}\nlocal SKYQ_FORMAT = ${FORMAT_VERSION}\n${guard}`;
}

/** The full text of a script as Redis runs it (args.lua and lib.lua included). */
export function scriptSource(name: ScriptName | MultiGroupScriptName): string {
  return sourceOf(name);
}

const commandName = (name: string) => `skyq_${name.replace('-', '_')}`;

type ScriptCommand = (...args: (string | number | Buffer)[]) => Promise<unknown>;

/**
 * Each script becomes a command of the client when first run: defining one makes ioredis hash
 * its text, and the 36 scripts' texts come to ~1.8 MB (each group script carries lib.lua and
 * its kin), which every actor thread made and hashed at its start for the ~8 it runs. Not with
 * auto-pipelining: a tick's pipeline takes the client's script commands when it is made, so
 * one defined later in the same tick would be missing from it; those clients define all now.
 */
export class Scripts {
  readonly #client: RedisClient;
  readonly #defined = new Set<string>();

  constructor(client: RedisClient) {
    this.#client = client;
    if (client.options.enableAutoPipelining) {
      for (const name of [...SCRIPT_NAMES, ...MULTI_GROUP_SCRIPTS]) this.#command(name);
    }
  }

  #command(name: ScriptName | MultiGroupScriptName, buffers = false): ScriptCommand {
    const command = commandName(name);
    if (!this.#defined.has(name)) {
      const lua = sourceOf(name);
      // Without numberOfKeys, ioredis takes the key count as the first argument.
      const numberOfKeys = multiGroup.has(name) ? undefined : NUMBER_OF_KEYS;
      this.#client.defineCommand(command, numberOfKeys ? { numberOfKeys, lua } : { lua });
      this.#defined.add(name);
    }
    const commands = this.#client as unknown as Record<string, ScriptCommand>;
    return commands[`${command}${buffers ? 'Buffer' : ''}`] as ScriptCommand;
  }

  /** Runs a script; with `buffers`, the reply's strings come as Buffers (exact bytes). */
  run(
    name: ScriptName,
    keys: string[],
    args: (string | number | Buffer)[],
    buffers = false,
  ): Promise<unknown> {
    const command = this.#command(name, buffers);
    return whileSlotMoves(this.#client, () => command.call(this.#client, ...keys, ...args));
  }

  /**
   * Runs a multi-group script. Only `routingKey` is declared: on a cluster it sends the call to
   * its master, where every group the script names must live; the script reads their keys
   * undeclared (allow-cross-slot-keys), which a script may do only so.
   */
  runMulti(
    name: MultiGroupScriptName,
    routingKey: string,
    args: (string | number)[],
  ): Promise<unknown> {
    const command = this.#command(name);
    return whileSlotMoves(this.#client, () => command.call(this.#client, 1, routingKey, ...args));
  }

  /** Runs a stand-alone script with its keys declared (all in one slot on a cluster). */
  runKeys(name: MultiGroupScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const command = this.#command(name);
    return whileSlotMoves(this.#client, () =>
      command.call(this.#client, keys.length, ...keys, ...args),
    );
  }
}
