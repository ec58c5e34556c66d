// The intake's own scripts (src/lua/intake-*.lua, each with its KEYS and ARGV in its
// header). Unlike the group scripts they take no group's keys and no lib.lua: they
// work on a source list's (or sorted set's) holding lists, in its slot, or on the intake
// registry in `{<prefix>:intake}`. ioredis runs them by EVALSHA.
import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';
import { withArgChecks } from './scripts.js';

export const INTAKE_SCRIPTS = { commit: 2, adopt: 4, close: 2, alive: 2, zmove: 3 } as const;
export type IntakeScriptName = keyof typeof INTAKE_SCRIPTS;

const LUA_DIR = new URL('../lua/', import.meta.url);
const commandName = (name: IntakeScriptName) => `skyq_intake_${name}`;

/** The full text of an intake script as Redis runs it (args.lua in front). */
export function intakeScriptSource(name: IntakeScriptName): string {
  return withArgChecks(readFileSync(new URL(`intake-${name}.lua`, LUA_DIR), 'utf8'));
}

type ScriptCommand = (...args: (string | number | Buffer)[]) => Promise<unknown>;

/** Defines the intake scripts on a client (once per client), and runs them. */
export class IntakeScripts {
  readonly #client: RedisClient;

  constructor(client: RedisClient) {
    this.#client = client;
    const commands = client as unknown as Record<string, unknown>;
    for (const [name, numberOfKeys] of Object.entries(INTAKE_SCRIPTS)) {
      if (commands[commandName(name as IntakeScriptName)]) continue;
      const lua = intakeScriptSource(name as IntakeScriptName);
      client.defineCommand(commandName(name as IntakeScriptName), { numberOfKeys, lua });
    }
  }

  /** Runs one script; `buffers`: its reply's strings as Buffers (any bytes, exactly). */
  run(
    name: IntakeScriptName,
    keys: string[],
    args: (string | number)[],
    buffers = false,
  ): Promise<unknown> {
    const commands = this.#client as unknown as Record<string, ScriptCommand>;
    const command = commands[`${commandName(name)}${buffers ? 'Buffer' : ''}`] as ScriptCommand;
    return command.call(this.#client, ...keys, ...args);
  }
}
