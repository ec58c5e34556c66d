/**
 * `skyq start` with no Redis named: skyq's own private redis-server, password-protected, with
 * files only its owner can read, stopped or reused deliberately. Tested on a free port
 * (SKYQ_EMBEDDED_PORT) and in a temporary working directory, since the default port (6379)
 * may belong to someone else on this machine.
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedRedis, knock, savedPassword } from '../src/cli/embedded.js';
import { notePath } from '../src/redis/default-redis.js';
import { heldPort, startStandalone } from './helpers/redis.js';
import {
  CLI,
  type CliChild,
  finish,
  removeTempDirs,
  spawnNode,
  tempDir,
  untilStartReady,
  waitFor,
} from './helpers/runtime.js';

afterAll(removeTempDirs);

const mode = (path: string) => statSync(path).mode & 0o777;

/** Modes of every file and directory under `dir`, by path relative to it. */
function modesUnder(dir: string, prefix = ''): [string, number][] {
  return readdirSync(dir).flatMap((name): [string, number][] => {
    const path = join(dir, name);
    const own: [string, number] = [join(prefix, name), mode(path)];
    return statSync(path).isDirectory() ? [own, ...modesUnder(path, own[0])] : [own];
  });
}

/** The compiled CLI run from `cwd` (where ./.skyq lives) with the embedded port set. */
function cliIn(cwd: string, port: number, args: string[]): CliChild {
  // No REDIS_URL: the commands must find the embedded server by themselves.
  const env = { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) };
  return spawnNode(CLI, args, env, [], cwd);
}

const ready = (run: CliChild) => untilStartReady(run);

/** The folder of the embedded server on a port other than the default: ./.skyq/<port>/. */
const dataDir = (cwd: string, port: number) => join(cwd, '.skyq', String(port));

/** The pid of the embedded server, from the note skyq keeps next to its data. */
const serverPid = (cwd: string, port: number) =>
  (JSON.parse(readFileSync(join(dataDir(cwd, port), 'embedded.json'), 'utf8')) as { pid: number })
    .pid;

describe('embeddedRedis', () => {
  it('starts a password-protected server whose files only its owner can read', async () => {
    const port = await heldPort();
    const dir = join(tempDir('skyq-embedded-'), '.skyq');
    const said: string[] = [];
    const first = await embeddedRedis((line) => said.push(line), { port, dir });
    try {
      expect(first.kind).toBe('started');
      const password = savedPassword(dir) as string;
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(first.url).toBe(`redis://:${password}@127.0.0.1:${port}`);
      expect(said.join('\n')).toMatch(/started a private redis-server/);
      expect(said.join('\n')).not.toContain(password);
      expect(await knock(port)).toBe('noauth');
      expect(await knock(port, 'guess')).toBe('wrongpass');
      expect(await knock(port, password)).toBe('pong');

      expect(mode(dir)).toBe(0o700);
      const modes = modesUnder(dir);
      expect(modes.map(([name]) => name)).toEqual(
        expect.arrayContaining(['redis-password', 'embedded.json', 'appendonlydir']),
      );
      // The append-only files hold the data: the server wrote them under umask 077.
      expect(modes.filter(([name]) => name.startsWith('appendonlydir/')).length).toBeGreaterThan(0);
      for (const [name, bits] of modes) expect([name, bits & 0o077]).toEqual([name, 0]);
    } finally {
      await first.stop();
    }
    expect(await knock(port)).toBe('down');
  });

  it('refuses a password-protected Redis it has no password for, in one line', async () => {
    const port = await heldPort();
    const other = await startStandalone({ port, password: 'not-yours' });
    try {
      const dir = join(tempDir('skyq-embedded-'), '.skyq');
      await expect(embeddedRedis(() => undefined, { port, dir })).rejects.toThrow(
        `a Redis at redis://127.0.0.1:${port} asks for a password that ${dir}/redis-password does not hold`,
      );
    } finally {
      await other.stop();
    }
  });

  it('uses a Redis without a password that answers at the port, and leaves it alone', async () => {
    const port = await heldPort();
    const yours = await startStandalone({ port });
    try {
      const said: string[] = [];
      const found = await embeddedRedis((line) => said.push(line), {
        port,
        dir: join(tempDir(), '.skyq'),
      });
      expect(found).toMatchObject({ kind: 'yours', url: `redis://127.0.0.1:${port}` });
      // Said plainly: it may be a shared server, not one meant for this queue.
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^skyq: using the existing Redis at .* skyq did not start it/);
      await found.stop();
      expect(await knock(port)).toBe('pong');
    } finally {
      await yours.stop();
    }
  });
});

describe('skyq start with no Redis named', () => {
  it('survives a kill -9: the next start reuses the server, then stops it', async () => {
    const port = await heldPort();
    const cwd = tempDir('skyq-embedded-cwd-');
    const args = ['start', '--groups', '2', '--log-dir', 'logs'];
    const first = cliIn(cwd, port, args);
    let pid = 0;
    try {
      await ready(first);
      expect(first.stdout()).toMatch(/started a private redis-server there/);
      pid = serverPid(cwd, port);
      // The README's second terminal: no Redis named, the saved password is used.
      const produced = await finish(cliIn(cwd, port, ['produce', '--groups', '2']), 'one\nquit\n');
      expect(produced.stderr).toBe('');
      expect(produced.code).toBe(0);
      const stats = await finish(cliIn(cwd, port, ['stats', '--groups', '2']));
      expect(stats.code).toBe(0);
      expect(stats.stdout).toContain('task_group:1');

      first.child.kill('SIGKILL');
      await first.done;
      const password = savedPassword(dataDir(cwd, port)) as string;
      expect(await knock(port, password)).toBe('pong'); // left running, not orphaned unseen

      const second = cliIn(cwd, port, args);
      try {
        await ready(second);
        expect(second.stdout()).toContain(
          `skyq: reusing the embedded server from an earlier run (pid ${pid}, data in ${dataDir(cwd, port)})`,
        );
        // The message added before the kill is still there and gets consumed now.
        const added = /added (\S+)/.exec(produced.stdout)?.[1] as string;
        await waitFor('the message to be consumed', () => {
          const logs = ['actor-0.log', 'actor-1.log'].map((f) => {
            try {
              return readFileSync(join(cwd, 'logs', f), 'utf8');
            } catch {
              return '';
            }
          });
          return logs.join('').includes(added) ? true : undefined;
        });
        second.child.kill('SIGINT');
        const stopped = await finish(second, '', 30_000);
        expect(stopped.code).toBe(0);
        expect(stopped.stderr).toBe('');
      } finally {
        second.child.kill('SIGKILL');
      }
      // The launcher that adopted the server stopped it.
      expect(await knock(port)).toBe('down');
    } finally {
      first.child.kill('SIGKILL');
      if (pid && (await knock(port)) !== 'down') process.kill(pid, 'SIGKILL');
    }
  });

  it('a Ctrl-C while the actors start stops the server it just started, and removes its note', async () => {
    const port = await heldPort();
    const cwd = tempDir('skyq-embedded-cwd-');
    const run = cliIn(cwd, port, ['start', '--log-dir', 'logs']); // ten actors: a start to catch
    let pid = 0;
    try {
      await waitFor('the embedded server started', () => {
        const found = /started a private redis-server there \(pid (\d+)/.exec(run.stdout());
        return found ? Number(found[1]) : undefined;
      }).then((found) => {
        pid = found;
      });
      run.child.kill('SIGINT'); // before the actors said ready: Node's default exited at once
      const ended = await finish(run, '', 30_000);
      expect([ended.code, ended.signal]).toEqual([0, null]);
      expect(await knock(port)).toBe('down');
      expect(existsSync(notePath(port))).toBe(false);
    } finally {
      run.child.kill('SIGKILL');
      if (pid && (await knock(port)) !== 'down') process.kill(pid, 'SIGKILL');
    }
  });

  /** Runs `check` with a launcher that started the embedded server and one sharing it. */
  async function withOwnerAndGuest(
    check: (run: { cwd: string; port: number; owner: CliChild; guest: CliChild }) => Promise<void>,
  ): Promise<void> {
    const port = await heldPort();
    const cwd = tempDir('skyq-embedded-cwd-');
    const owner = cliIn(cwd, port, ['start', '--groups', '1', '--log-dir', 'logs-a']);
    let guest: CliChild | undefined;
    let pid = 0;
    try {
      await ready(owner);
      pid = serverPid(cwd, port);
      guest = cliIn(cwd, port, ['start', '--groups', '1', '--log-dir', 'logs-b']);
      await ready(guest);
      await check({ cwd, port, owner, guest });
    } finally {
      owner.child.kill('SIGKILL');
      guest?.child.kill('SIGKILL');
      if (pid && (await knock(port)) !== 'down') process.kill(pid, 'SIGKILL');
    }
  }

  it('the launcher that started it, stopped first, leaves it running for the other', () =>
    withOwnerAndGuest(async ({ cwd, port, owner, guest }) => {
      owner.child.kill('SIGINT');
      const ended = await finish(owner, '', 30_000);
      expect(ended.code).toBe(0);
      expect(ended.stdout + ended.stderr).toContain(
        'skyq: leaving the embedded server running: another launcher still uses it',
      );
      // Its exit once killed every server it had started, this one too.
      await sleep(500);
      expect(await knock(port, savedPassword(dataDir(cwd, port)))).toBe('pong');
      // The guest works on, and stopping leaves the server to the next `skyq start`, as before.
      const added = await finish(
        cliIn(cwd, port, ['produce', '--groups', '1', '--delay', '0']),
        'still here\nquit\n',
      );
      expect([added.code, added.stderr]).toEqual([0, '']);
      guest.child.kill('SIGINT');
      expect((await finish(guest, '', 30_000)).code).toBe(0);
    }));

  it('a second launcher shares the server and leaves it to the one that started it', () =>
    withOwnerAndGuest(async ({ cwd, port, owner, guest }) => {
      expect(guest.stdout()).toContain(
        `skyq: sharing the embedded server of the running launcher (pid ${owner.child.pid})`,
      );
      guest.child.kill('SIGINT');
      expect((await finish(guest, '', 30_000)).code).toBe(0);
      expect(await knock(port, savedPassword(dataDir(cwd, port)))).toBe('pong');
      owner.child.kill('SIGINT');
      expect((await finish(owner, '', 30_000)).code).toBe(0);
      expect(await knock(port)).toBe('down');
    }));
});
