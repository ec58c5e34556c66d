// How the Queue runs its scripts: one group's keys per call, Redis errors explained for a
// reader (NOPERM names the ACL rule), nothing once closed, and the eviction policy read once
// after the first command (connected by then, a cluster's masters known).
import { errors } from '../base/errors.js';
import { groupKeys } from '../base/keys.js';
import type { RedisClient } from '../redis/connection.js';
import { explainRedisError } from '../redis/explain.js';
import { type MultiGroupScriptName, type ScriptName, Scripts } from '../redis/scripts.js';
import type { QueueConfig } from './config.js';
import { warnIfEvicting } from './eviction-warning.js';

export type Args = (string | number | Buffer)[];

export class GroupScripts {
  readonly #client: RedisClient;
  readonly #config: QueueConfig;
  readonly #scripts: Scripts;
  readonly keys: string[][];
  #policyRead = false;
  closed = false;

  constructor(client: RedisClient, config: QueueConfig) {
    this.#client = client;
    this.#config = config;
    this.#scripts = new Scripts(client);
    this.keys = Array.from({ length: config.groups }, (_, g) => groupKeys(config.prefix, g));
  }

  /** One script against one group's keys; `buffers`: the reply's strings as Buffers. */
  run(name: ScriptName, group: number, args: Args, buffers = false): Promise<unknown> {
    if (this.closed) return Promise.reject(errors.closed('queue'));
    const call = this.#scripts.run(name, this.keys[group] as string[], args, buffers);
    return this.#firstCommand(call).catch((error) => {
      throw this.explain(error);
    });
  }

  /** A script over several groups at once (see Scripts.runMulti). */
  runMulti(name: MultiGroupScriptName, routingKey: string, args: (string | number)[]) {
    if (this.closed) return Promise.reject(errors.closed('queue'));
    return this.#scripts.runMulti(name, routingKey, args).catch((error) => {
      throw this.explain(error);
    });
  }

  /** A stand-alone script with its keys declared (see Scripts.runKeys). */
  runKeys(name: MultiGroupScriptName, keys: string[], args: (string | number)[]) {
    if (this.closed) return Promise.reject(errors.closed('queue'));
    return this.#scripts.runKeys(name, keys, args).catch((error) => {
      throw this.explain(error);
    });
  }

  /** A Redis error as a reader needs it: NOPERM names the ACL rule, a lost connection says so. */
  explain(error: unknown): unknown {
    return explainRedisError(error, this.#config.prefix, this.#client);
  }

  #firstCommand<T>(command: Promise<T>): Promise<T> {
    if (this.#policyRead || !this.#config.warnEviction) return command;
    this.#policyRead = true;
    const read = () => (this.closed ? undefined : warnIfEvicting(this.#client));
    void command.then(read, read);
    return command;
  }
}
