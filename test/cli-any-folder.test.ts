/**
 * One way to the server `skyq start` (`npm start`) runs for itself, from any folder: it leaves a
 * note only its user can read ($XDG_STATE_HOME/skyq/<port>.json), which every command and
 * `new Queue()` with no Redis named read; `skyq env` prints it as REDIS_URL for `eval`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { knock } from '../src/cli/embedded.js';
import { defaultRedisUrl, writeEmbeddedNote } from '../src/redis/default-redis.js';
import { heldPort } from './helpers/redis.js';
import {
  CLI,
  type CliChild,
  finish,
  ROOT,
  removeTempDirs,
  spawnNode,
  tempDir,
  untilStartReady,
} from './helpers/runtime.js';

afterAll(removeTempDirs);

const mode = (path: string) => statSync(path).mode & 0o777;

it('produce, get, start and the library find the embedded server from another folder', async () => {
  const port = await heldPort();
  const state = tempDir('skyq-state-');
  // Nothing named: no REDIS_URL; the notes go to a folder of this test's own.
  const env = { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port), XDG_STATE_HOME: state };
  const cli = (cwd: string, args: string[]): CliChild => spawnNode(CLI, args, env, [], cwd);
  const [home, elsewhere] = [tempDir('skyq-folder-a-'), tempDir('skyq-folder-b-')];
  const owner = cli(home, ['start', '--groups', '2', '--log-dir', 'logs']);
  let guest: CliChild | undefined;
  try {
    await untilStartReady(owner);
    const note = join(state, 'skyq', `${port}.json`);
    expect(owner.stdout()).toContain(`its address is in ${note}`);
    expect([mode(join(state, 'skyq')), mode(note)]).toEqual([0o700, 0o600]);
    const password = readFileSync(join(home, '.skyq', String(port), 'redis-password'), 'utf8');
    const url = `redis://:${password.trim()}@127.0.0.1:${port}`;

    // skyq env, from another folder: the URL with its password, for eval.
    const printed = await finish(cli(elsewhere, ['env']));
    expect(printed.stderr).toBe('');
    expect(printed.stdout).toBe(`export REDIS_URL='${url}'\n`);

    // A write command from another folder says where it wrote, password masked.
    const produced = await finish(cli(elsewhere, ['produce', '--groups', '2']), 'hi\nquit\n');
    expect(produced.stderr).toBe('');
    const [where, added] = produced.stdout.trim().split('\n');
    expect(where).toBe(`writing to redis://:***@127.0.0.1:${port}`);
    const id = /^added (\S+)$/.exec(added ?? '')?.[1] as string;
    expect(id).toBeDefined();

    // The library with no redis option, from another folder.
    const script = join(elsewhere, 'get.mjs');
    writeFileSync(
      script,
      `import { Queue } from ${JSON.stringify(join(ROOT, 'dist/src/index.js'))};
const queue = new Queue({ groups: 2 });
console.log((await queue.get(${JSON.stringify(id)}))?.body);
await queue.close();
`,
    );
    const library = await finish(spawnNode(script, [], env, [], elsewhere));
    expect(library.stderr).toBe('');
    expect(library.stdout).toBe('hi\n');

    // A second launcher from another folder shares the server, and says whose folder it is.
    guest = cli(elsewhere, ['start', '--groups', '2', '--log-dir', 'logs']);
    await untilStartReady(guest);
    expect(guest.stdout()).toContain(
      `skyq: sharing the embedded server of the running launcher (pid ${owner.child.pid}), data in ${join(home, '.skyq', String(port))}`,
    );
    expect(existsSync(join(elsewhere, '.skyq'))).toBe(false);
    guest.child.kill('SIGINT');
    expect((await finish(guest, '', 30_000)).stdout).toMatch(/skyq: stopped\n$/);

    // The owner stops the server, says so, and takes its note away.
    owner.child.kill('SIGINT');
    const ended = await finish(owner, '', 30_000);
    expect(ended.stdout).toContain(
      `skyq: stopped, and the embedded redis-server it ran (its data stays in ${join(home, '.skyq', String(port))})`,
    );
    expect(await knock(port)).toBe('down');
    expect(existsSync(note)).toBe(false);
    const after = await finish(cli(elsewhere, ['env']));
    expect(after.code).toBe(1);
    expect(after.stdout).toBe('');
    expect(after.stderr).toContain(
      `(no Redis named, and no skyq start of this user runs an embedded server on port ${port}`,
    );
  } finally {
    guest?.child.kill('SIGKILL');
    owner.child.kill('SIGINT');
    await finish(owner, '', 30_000);
  }
});

it('with nothing named: REDIS_URL, else a note whose server runs, else 127.0.0.1', () => {
  // Put back key by key: replacing process.env with a copy leaves a plain object in its place,
  // and worker threads started later in this process (by a later file, when files share a
  // worker) would take the real environment, not what the test then sets in that object.
  const names = ['XDG_STATE_HOME', 'SKYQ_EMBEDDED_PORT', 'REDIS_URL'] as const;
  const saved = names.map((name) => process.env[name]);
  try {
    process.env.XDG_STATE_HOME = tempDir('skyq-state-');
    process.env.SKYQ_EMBEDDED_PORT = '16999';
    delete process.env.REDIS_URL;
    expect(defaultRedisUrl()).toBe('redis://127.0.0.1:16999');
    // A note whose server is gone (its pid ended) is ignored: no stale password is tried.
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    writeEmbeddedNote(16999, { url: 'redis://:old@127.0.0.1:16999', pid: gone, dir: '/nowhere' });
    expect(defaultRedisUrl()).toBe('redis://127.0.0.1:16999');
    writeEmbeddedNote(16999, { url: 'redis://:pw@127.0.0.1:16999', pid: process.pid, dir: '/x' });
    expect(defaultRedisUrl()).toBe('redis://:pw@127.0.0.1:16999');
    process.env.REDIS_URL = 'redis://127.0.0.1:17000';
    expect(defaultRedisUrl()).toBe('redis://127.0.0.1:17000');
  } finally {
    names.forEach((name, i) => {
      const value = saved[i];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    });
  }
});

it('a note left by a server that no longer runs is named as that, not as missing', async () => {
  const port = await heldPort();
  const state = tempDir('skyq-state-');
  const env = { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port), XDG_STATE_HOME: state };
  const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
  const saved = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = state; // writeEmbeddedNote writes under it, as the CLI reads
  try {
    writeEmbeddedNote(port, { url: `redis://:old@127.0.0.1:${port}`, pid: gone, dir: '/nowhere' });
  } finally {
    if (saved === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved;
  }
  const note = join(state, 'skyq', `${port}.json`);
  const run = await finish(spawnNode(CLI, ['stats'], env, [], tempDir()));
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`(${note} names a server that no longer runs)`);
  expect(run.stderr).not.toContain('is missing');
});
