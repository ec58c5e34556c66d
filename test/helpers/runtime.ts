/**
 * Helpers for the runtime and CLI suites: temporary log dirs, polling with a deadline, the
 * fixture handler's record of finished ids, and running the compiled `skyq` CLI as a child.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { groupKeys, keyOf } from '../../src/base/keys.js';
import type { Queue } from '../../src/index.js';
import {
  type RedisClusterHandle,
  type RedisServerHandle,
  startCluster,
  startStandalone,
} from './redis.js';

export const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
export const CLI = join(ROOT, 'dist/src/cli/main.js');

/** Absolute path of a file under test/fixtures. */
export const fixture = (name: string) => join(ROOT, 'test/fixtures', name);

/** Where the fixture handler connects to record finished ids (a URL or JSON cluster nodes). */
export const FIXTURE_ENV = 'SKYQ_FIXTURE_REDIS';

const dirs: string[] = [];
/** A fresh temporary directory, removed by removeTempDirs(). */
export function tempDir(name = 'skyq-rt-'): string {
  const dir = mkdtempSync(join(tmpdir(), name));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

import { waitFor } from './queue.js';

export { waitFor };

/** Every id the fixture handler recorded in `list`, duplicates included. */
export async function recorded(client: Redis | Cluster, list: string): Promise<string[]> {
  return client.lrange(list, 0, -1);
}

/** Ids per state, read straight from the group's sorted sets. */
export async function idsByState(client: Redis | Cluster, queue: Queue) {
  const out = {
    delayed: [] as string[],
    ready: [] as string[],
    active: [] as string[],
    dead: [] as string[],
  };
  for (let g = 0; g < queue.config.groups; g++) {
    const [delayed, ready, active, dead] = groupKeys(queue.config.prefix, g) as [
      string,
      string,
      string,
      string,
    ];
    out.delayed.push(...(await client.zrange(delayed, 0, -1)));
    // Ready members are the due time (11 hex digits) followed by the id.
    out.ready.push(...(await client.zrange(ready, 0, -1)).map((member) => member.slice(11)));
    // Leases only: the placeholder at +inf is no lease (format 7).
    out.active.push(...(await client.zrangebyscore(active, '-inf', '(+inf')));
    out.dead.push(...(await client.zrange(dead, 0, -1)));
  }
  return out;
}

/** How many MessagePorts keep this process busy: each actor and coordinator holds some. */
export function openPorts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running CLI child whose output is collected as it comes. */
export interface CliChild {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  done: Promise<CliResult>;
}

/** Runs `skyq <args>` from dist/ as a child process. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): CliChild {
  return spawnNode(CLI, args, env);
}

/**
 * Runs a Node script as a child process (`nodeArgs` go to node itself), collecting its output.
 * `env` is laid over this process's environment; a variable set to undefined is left out.
 */
export function spawnNode(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
  cwd = ROOT,
): CliChild {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const done = new Promise<CliResult>((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) =>
      resolvePromise({ code, signal, stdout: out, stderr: err }),
    );
  });
  return { child, stdout: () => out, stderr: () => err, done };
}

/** Waits until a running `skyq start` says its actors are ready; fails at once if it exited. */
export async function untilStartReady(run: CliChild, what = 'skyq start'): Promise<void> {
  await waitFor(
    `${what} to be ready`,
    () => {
      if (run.child.exitCode !== null) throw new Error(`${what} exited: ${run.stderr()}`);
      return /actors? ready/.test(run.stdout()) ? true : undefined;
    },
    30_000,
  );
}

/** Runs the CLI to the end with `input` on stdin; kills it after `timeoutMs`. */
export function runCli(args: string[], input = '', timeoutMs = 20_000): Promise<CliResult> {
  return finish(spawnCli(args), input, timeoutMs);
}

/** Feeds `input` to a child's stdin and waits for its end; kills it after `timeoutMs`. */
export async function finish(run: CliChild, input = '', timeoutMs = 20_000): Promise<CliResult> {
  run.child.stdin?.end(input);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  try {
    return await run.done;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A private redis-server for one test file, a client on it, and the fixtures pointed at it;
 * stopped (and the file's temp dirs removed) after the file.
 */
export function useRuntimeRedis(): { readonly server: RedisServerHandle; readonly client: Redis } {
  const context = {} as { server: RedisServerHandle; client: Redis };
  beforeAll(async () => {
    context.server = await startStandalone();
    context.client = new Redis(context.server.url);
    process.env[FIXTURE_ENV] = context.server.url;
  });
  afterAll(async () => {
    context.client?.disconnect();
    await context.server?.stop();
    removeTempDirs();
  });
  return context;
}

/** useRuntimeRedis's twin on a real 3-master cluster: the fixtures record through it. */
export function useRuntimeCluster(): {
  readonly cluster: RedisClusterHandle;
  readonly client: Cluster;
} {
  const context = {} as { cluster: RedisClusterHandle; client: Cluster };
  beforeAll(async () => {
    context.cluster = await startCluster();
    context.client = new Cluster(context.cluster.nodes);
    process.env[FIXTURE_ENV] = JSON.stringify(context.cluster.nodes);
  });
  afterAll(async () => {
    context.client?.disconnect();
    await context.cluster?.stop();
    removeTempDirs();
  });
  return context;
}

/**
 * Ids of the connections named `name` that Redis holds blocked right now (CLIENT LIST flag b):
 * an idle actor's BLPOP on its wake list is `skyq-wake-<group>`. Asserts a precondition such
 * as "the actor sleeps in Redis" instead of sleeping and hoping it does.
 */
export async function blockedClients(client: Redis | Cluster, name: string): Promise<number[]> {
  const list = String(await (client as Redis).call('CLIENT', 'LIST'));
  return list
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2))))
    .filter((fields) => fields.name === name && String(fields.flags ?? '').includes('b'))
    .map((fields) => Number(fields.id));
}

/**
 * Makes an actor of the group claim once more and waits until it did: a token in its wake list
 * (as a producer's add leaves), then the `next` key the claim writes (a paused claim too). For
 * a paused group, whose adds wake nobody, so that a check afterwards sees what a claim does.
 */
export async function untilClaimed(client: Redis | Cluster, prefix: string, group: number) {
  const next = keyOf(prefix, group, 'next');
  await client.del(next);
  await client.rpush(keyOf(prefix, group, 'wake'), '0');
  await waitFor(`a claim of group ${group}`, async () =>
    (await client.exists(next)) === 1 ? true : undefined,
  );
}

/**
 * Waits until the group's wake list holds no token and `count` actors of the group sit in
 * BLPOP on it: every actor of the group has taken the last token, looked, and gone to sleep.
 */
export async function untilAsleep(
  client: Redis | Cluster,
  prefix: string,
  group: number,
  count = 1,
): Promise<number[]> {
  return waitFor(`${count} actor(s) of group ${group} asleep in BLPOP`, async () => {
    if ((await client.llen(keyOf(prefix, group, 'wake'))) > 0) return undefined;
    const blocked = await blockedClients(client, `skyq-wake-${group}`);
    return blocked.length === count ? blocked : undefined;
  });
}
