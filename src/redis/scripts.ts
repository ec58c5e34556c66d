// The Lua scripts, each in its own file under ../lua with a header naming its
// KEYS and ARGV. lib.lua is put in front of each; ioredis runs them by
// EVALSHA (falling back to EVAL once per server when the cache is empty).
import { readFileSync } from 'node:fs';
import { KEY_NAMES } from '../keys.js';
import type { RedisClient } from './connection.js';
import { isCluster } from './connection.js';

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
  'dead-retry',
  'dead-purge',
  'pause',
  'watch',
  'time',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** Every script takes the group's keys in the same order (see keys.ts). */
const NUMBER_OF_KEYS = KEY_NAMES.length;
const LUA_DIR = new URL('../lua/', import.meta.url);

let sources: Map<ScriptName, string> | undefined;

function loadSources(): Map<ScriptName, string> {
  if (!sources) {
    const lib = readFileSync(new URL('lib.lua', LUA_DIR), 'utf8');
    sources = new Map(
      SCRIPT_NAMES.map((name) => [
        name,
        `${lib}\n${readFileSync(new URL(`${name}.lua`, LUA_DIR), 'utf8')}`,
      ]),
    );
  }
  return sources;
}

const commandName = (name: ScriptName) => `skyq_${name.replace('-', '_')}`;

type ScriptCommand = (...args: (string | number | Buffer)[]) => Promise<unknown>;

export class Scripts {
  readonly #client: RedisClient;

  constructor(client: RedisClient) {
    this.#client = client;
    for (const [name, lua] of loadSources()) {
      client.defineCommand(commandName(name), { numberOfKeys: NUMBER_OF_KEYS, lua });
    }
  }

  /** Runs a script; with `buffers`, the reply's strings come as Buffers (exact bytes). */
  run(
    name: ScriptName,
    keys: string[],
    args: (string | number | Buffer)[],
    buffers = false,
  ): Promise<unknown> {
    const commands = this.#client as unknown as Record<string, ScriptCommand>;
    const command = commands[`${commandName(name)}${buffers ? 'Buffer' : ''}`] as ScriptCommand;
    return command.call(this.#client, ...keys, ...args);
  }

  /** Loads every script into every master now, so the first real call is EVALSHA. */
  async preload(): Promise<void> {
    // A cluster client knows its masters only once connected: before that nodes() is empty.
    if (isCluster(this.#client)) await this.#client.ping();
    const servers = isCluster(this.#client) ? this.#client.nodes('master') : [this.#client];
    await Promise.all(
      servers.flatMap((server) =>
        [...loadSources().values()].map((lua) => server.script('LOAD', lua)),
      ),
    );
  }
}
