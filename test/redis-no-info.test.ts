/**
 * A Redis ACL user that may not run INFO (the rule of src/redis/acl.ts without +info): ioredis's
 * ready check printed "Skipping the ready check because INFO command fails" for every connection
 * (about a dozen lines for `skyq start`), then did not wait while Redis loaded its dataset, so
 * the first commands failed with -LOADING. skyq's own check (src/redis/ready-check.ts) says
 * nothing and waits for a loading server, whether the user may run INFO or not.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { Queue } from '../src/index.js';
import { aclRule } from '../src/redis/acl.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { finish, removeTempDirs, spawnCli, tempDir, untilStartReady } from './helpers/runtime.js';

const PREFIX = 'noinfo_q';
const SKIPPING = 'Skipping the ready check';
let server: RedisServerHandle;
let admin: Redis;

const urlOf = (user: string) => `redis://${user}:pw-${user}@127.0.0.1:${server.port}`;
async function makeUser(user: string, rule: string): Promise<void> {
  await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>pw-${user}`, ...rule.split(' '));
}

beforeAll(async () => {
  // DEBUG RELOAD makes the server load its dataset again while it serves others -LOADING.
  server = await startStandalone({ extraArgs: ['--enable-debug-command', 'local'] });
  admin = new Redis(server.url);
  await makeUser('full', aclRule(PREFIX));
  const rule = aclRule(PREFIX).split(' ');
  await makeUser('noinfo', rule.filter((part) => part !== '+info').join(' '));
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
  removeTempDirs();
});

/** What ioredis (or anyone) writes through console.warn or to stderr while `work` runs. */
async function written(work: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  });
  const write = process.stderr.write.bind(process.stderr);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: unknown) => {
    lines.push(String(chunk));
    return write(chunk as string);
  }) as typeof process.stderr.write);
  try {
    await work();
  } finally {
    warn.mockRestore();
    stderr.mockRestore();
  }
  return lines.join('\n');
}

describe('a user that may not run INFO', () => {
  it('uses a Queue without a word from ioredis on stderr', async () => {
    const output = await written(async () => {
      const queue = new Queue({ redis: urlOf('noinfo'), prefix: PREFIX, groups: 2 });
      try {
        await queue.ready();
        const id = await queue.add('hello');
        expect((await queue.get(id))?.state).toBe('ready');
        expect(await queue.counts()).toHaveLength(2);
      } finally {
        await queue.close();
      }
    });
    expect(output).not.toContain(SKIPPING);
  });

  it('runs skyq start (a connection per actor) and the CLI without a word from ioredis', async () => {
    const env = { REDIS_URL: urlOf('noinfo') };
    const flags = ['--prefix', PREFIX, '--groups', '2'];
    const start = spawnCli(['start', '--log-dir', tempDir(), ...flags], env);
    onTestFinished(() => void start.child.kill('SIGKILL'));
    await untilStartReady(start);
    const produce = spawnCli(['produce', ...flags, '--delay', '0s'], env);
    const produced = await finish(produce, 'x\nquit\n');
    expect(produced.code).toBe(0);
    start.child.kill('SIGINT');
    const started = await finish(start, '', 30_000);
    for (const run of [started, produced]) {
      expect(run.stderr).not.toContain(SKIPPING);
      // Nothing skyq did not write itself: ioredis's lines start with its own words.
      expect(run.stderr).not.toMatch(/ioredis|enableReadyCheck/);
      expect(run.stdout + run.stderr).not.toContain('pw-noinfo');
    }
    expect(started.code).toBe(0);
  });
});

describe('a server loading its dataset', () => {
  const loading = async () => /^loading:1\r?$/m.test(await admin.info('persistence'));

  /** Runs `work` while the server loads about 25,000 keys again (a couple of seconds). */
  async function whileLoading(work: () => Promise<void>): Promise<void> {
    await admin.call('DEBUG', 'POPULATE', '25000', 'noinfo_fill');
    await admin.config('SET', 'key-load-delay', '10'); // µs per key
    // While loading, the server answers other clients (-LOADING) every KiB, not every 2 MiB.
    await admin.config('SET', 'loading-process-events-interval-bytes', '1024');
    const reloader = new Redis(server.url);
    const reloaded = reloader.call('DEBUG', 'RELOAD');
    try {
      for (let i = 0; !(await loading()); i++) {
        if (i > 200) throw new Error('the server never started loading');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await work();
    } finally {
      await reloaded;
      reloader.disconnect();
      await admin.config('SET', 'key-load-delay', '0');
    }
  }

  it.each(['full', 'noinfo'])('is waited for by a new Queue of the user %s', async (user) => {
    await whileLoading(async () => {
      // A loading server is not an unreachable one: no giving up after 5 s on a slow machine.
      const queue = new Queue({ redis: urlOf(user), prefix: PREFIX, unreachableMs: 60_000 });
      try {
        const adding = queue.add('after the load');
        // The add was sent, or held, while the server still loaded.
        expect(await loading()).toBe(true);
        const id = await adding;
        expect(await loading()).toBe(false);
        expect((await queue.get(id))?.state).toBe('ready');
      } finally {
        await queue.close();
      }
    });
  });
});
