// The intake's own scripts (src/lua/intake-*.lua, each with its KEYS and ARGV in its
// header). Unlike the group scripts they take no group's keys and no lib.lua: they
// work on a source list's (or sorted set's) holding lists, in its slot, or on the intake
// registry in `{<prefix>:intake}`. They run by EVALSHA first, as the others (script-call.ts).
import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';
import { callScript, type ScriptText, scriptText } from './script-call.js';
import { withArgChecks } from './scripts.js';

/** Each intake script and how many keys it takes. */
export const INTAKE_SCRIPTS = { commit: 2, adopt: 4, close: 2, alive: 2, zmove: 3 } as const;
export type IntakeScriptName = keyof typeof INTAKE_SCRIPTS;

const LUA_DIR = new URL('../lua/', import.meta.url);

/** The full text of an intake script as Redis runs it (args.lua in front). */
export function intakeScriptSource(name: IntakeScriptName): string {
  return withArgChecks(readFileSync(new URL(`intake-${name}.lua`, LUA_DIR), 'utf8'));
}

const texts = new Map<IntakeScriptName, ScriptText>();

/** Runs the intake scripts on one client, by EVALSHA first (script-call.ts). */
export class IntakeScripts {
  readonly #client: RedisClient;

  constructor(client: RedisClient) {
    this.#client = client;
  }

  /** Runs one script; `buffers`: its reply's strings as Buffers (any bytes, exactly). */
  run(
    name: IntakeScriptName,
    keys: string[],
    args: (string | number)[],
    buffers = false,
  ): Promise<unknown> {
    let script = texts.get(name);
    if (!script) {
      script = scriptText(intakeScriptSource(name));
      texts.set(name, script);
    }
    return callScript(this.#client, script, [keys.length, ...keys, ...args], buffers);
  }
}
