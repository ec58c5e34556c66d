/**
 * One embedded server per port: with another SKYQ_EMBEDDED_PORT, `skyq start` keeps its data,
 * password and AOF in ./.skyq/<port>/, never in the first server's folder; a ./.skyq that an
 * older skyq wrote (every port in ./.skyq itself) keeps working, data and password included.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { embeddedDir } from '../src/cli/embedded-dir.js';
import { Queue } from '../src/index.js';
import { startRedisServer } from '../src/redis/server.js';
import { heldPort } from './helpers/redis.js';
import {
  CLI,
  type CliChild,
  finish,
  removeTempDirs,
  spawnNode,
  tempDir,
  untilStartReady,
} from './helpers/runtime.js';

afterAll(removeTempDirs);

/** The compiled CLI run from `cwd` with nothing named and the embedded port set. */
function cliIn(cwd: string, port: number, args: string[]): CliChild {
  return spawnNode(CLI, args, { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) }, [], cwd);
}

async function stop(run: CliChild): Promise<void> {
  run.child.kill('SIGINT');
  const end = await finish(run, '', 30_000);
  expect(end.stderr).toBe('');
  expect(end.code).toBe(0);
}

/** Where a running server keeps its files, and whether it appends, by its own word. */
async function serverDir(port: number, password: string): Promise<string> {
  const client = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true });
  try {
    await client.connect();
    const [, dir] = (await client.config('GET', 'dir')) as [string, string];
    const [, aof] = (await client.config('GET', 'appendonly')) as [string, string];
    expect(aof).toBe('yes');
    return dir;
  } finally {
    client.disconnect();
  }
}

const passwordIn = (dir: string) => readFileSync(join(dir, 'redis-password'), 'utf8').trim();

it('a second embedded port gets its own folder, password and AOF', async () => {
  const [first, second] = [await heldPort(), await heldPort()];
  const cwd = tempDir('skyq-ports-');
  const a = cliIn(cwd, first, ['start', '--groups', '1', '--log-dir', 'logs-a']);
  let b: CliChild | undefined;
  try {
    await untilStartReady(a);
    b = cliIn(cwd, second, ['start', '--groups', '1', '--log-dir', 'logs-b']);
    await untilStartReady(b);
    // Neither is the default port: each has a folder of its own under ./.skyq.
    const [dirA, dirB] = [join(cwd, '.skyq', String(first)), join(cwd, '.skyq', String(second))];
    expect(a.stdout()).toContain(`started a private redis-server there (pid`);
    expect(a.stdout()).toContain(`data and password in ${dirA})`);
    expect(b.stdout()).toContain(`data and password in ${dirB})`);
    expect(passwordIn(dirA)).not.toBe(passwordIn(dirB));
    expect(await serverDir(first, passwordIn(dirA))).toBe(dirA);
    expect(await serverDir(second, passwordIn(dirB))).toBe(dirB);
    expect(existsSync(join(dirA, 'appendonlydir'))).toBe(true);
    expect(existsSync(join(dirB, 'appendonlydir'))).toBe(true);

    // The second terminal finds each server's password in that port's folder.
    for (const port of [first, second]) {
      const stats = await finish(cliIn(cwd, port, ['stats', '--groups', '1']));
      expect(stats.stderr).toBe('');
      expect(stats.stdout.split('\n')[0]).toBe(`reading redis://:***@127.0.0.1:${port}`);
    }
  } finally {
    if (b) await stop(b);
    await stop(a);
  }
});

it('a ./.skyq an older skyq wrote for a non-default port keeps its data and password', async () => {
  const port = await heldPort();
  const cwd = tempDir('skyq-ports-');
  // What the older embeddedRedis wrote: everything at the top of ./.skyq, whatever the port.
  const legacy = join(cwd, '.skyq');
  mkdirSync(legacy, { mode: 0o700 });
  const password = 'an-older-runs-password';
  writeFileSync(join(legacy, 'redis-password'), `${password}\n`, { mode: 0o600 });
  const old = await startRedisServer({
    port,
    dir: legacy,
    appendonly: true,
    password,
    privateFiles: true,
  });
  const url = `redis://:${password}@127.0.0.1:${port}`;
  const queue = new Queue({ redis: url, groups: 1 });
  const id = await queue.add('kept across the upgrade', { delay: 60 * 60_000 });
  await queue.close();
  await old.stop(); // SIGKILL: only what the AOF held survives

  const run = cliIn(cwd, port, ['start', '--groups', '1', '--log-dir', 'logs']);
  try {
    await untilStartReady(run);
    expect(run.stdout()).toContain(`data and password in ${legacy})`);
    expect(existsSync(join(legacy, String(port)))).toBe(false);
    const got = await finish(cliIn(cwd, port, ['get', id, '--groups', '1']));
    expect(got.stderr).toBe('');
    expect(got.stdout).toMatch(/state\s+delayed/);
    expect(got.stdout).toContain('kept across the upgrade');
  } finally {
    await stop(run);
  }
});

it('the default port keeps ./.skyq itself; a folder several ports shared stays the default one', () => {
  const base = join(tempDir('skyq-ports-'), '.skyq');
  expect(embeddedDir(6379, base)).toBe(base); // fresh: the default port's, as before
  expect(embeddedDir(26441, base)).toBe(join(base, '26441'));
  mkdirSync(base);
  writeFileSync(join(base, 'redis-26441.conf'), '');
  // Only 26441 ever ran from it: it stays 26441's, and the default port moves out.
  expect(embeddedDir(26441, base)).toBe(base);
  expect(embeddedDir(6379, base)).toBe(join(base, '6379'));
  writeFileSync(join(base, 'redis-6379.conf'), '');
  expect(embeddedDir(6379, base)).toBe(base);
  expect(embeddedDir(26441, base)).toBe(join(base, '26441'));
});
