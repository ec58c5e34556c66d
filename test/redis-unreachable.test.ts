/**
 * Redis unreachable: every CLI command fails within 5 s with one readable line and a
 * non-zero exit code (start included); a library Queue with failFast does the same; and a
 * running launcher rides out a Redis restart without one "[ioredis] Unhandled error event".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { Queue, SkyqError } from '../src/index.js';
import { expectServedBy, heldPort, startStandalone } from './helpers/redis.js';
import {
  type CliResult,
  finish,
  removeTempDirs,
  spawnCli,
  tempDir,
  waitFor,
} from './helpers/runtime.js';

afterAll(removeTempDirs);

/** Runs the CLI to its end; `ms` is how long it took, Node's own start-up included. */
async function timed(args: string[]): Promise<CliResult & { ms: number }> {
  const started = Date.now();
  const result = await finish(spawnCli(args), 'a line\n', 30_000);
  return { ...result, ms: Date.now() - started };
}

describe('a CLI command against a dead Redis', () => {
  it('prints one line naming the address and the reason, exits 1, within 5 s', async () => {
    const port = await heldPort(); // free now: nothing listens there
    const url = `redis://127.0.0.1:${port}`;
    const expected = `skyq: cannot reach Redis at ${url}: connection refused`;
    const commands: [string[], string][] = [
      [['stats', '--redis', url], expected],
      [['produce', '--redis', url], expected],
      [['dlq', 'list', '--redis', url], expected],
      [['dlq', 'retry', '--redis', url], expected],
      [['cancel', 'x', '--redis', url], expected],
      [['start', '--redis', url, '--log-dir', tempDir()], expected],
      [
        ['start', '--cluster', `127.0.0.1:${port}`, '--log-dir', tempDir()],
        `skyq: cannot reach Redis at cluster 127.0.0.1:${port}: connection refused`,
      ],
      [
        ['stats', '--cluster', `127.0.0.1:${port}`],
        `skyq: cannot reach Redis at cluster 127.0.0.1:${port}: connection refused`,
      ],
    ];
    // One at a time, each after a run that needs no Redis (skyq acl): on a busy machine Node's
    // start-up alone can take seconds, and the 5 s are what Redis being away may cost.
    for (const [args, line] of commands) {
      const what = args.join(' ');
      const baseline = await timed(['acl']);
      const result = await timed(args);
      expect(result.code, what).toBe(1);
      expect(result.stderr.trim(), what).toBe(line);
      expect(result.stdout, what).toBe('');
      expect(result.ms - baseline.ms, what).toBeLessThan(5000);
      expect(result.ms, what).toBeLessThan(15_000);
    }
  });

  it('start --redis http://… names the problem in one line, with no stack', async () => {
    const result = await finish(spawnCli(['start', '--redis', 'http://example.com:6379']));
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'skyq: redis: must be a redis:// or rediss:// URL, not http:// (got "http://example.com:6379")\nsee skyq start --help',
    );
  });
});

describe('a library Queue', () => {
  it('with failFast rejects with ERR_SKYQ_UNREACHABLE at once', async () => {
    const port = await heldPort();
    const queue = new Queue({ redis: `redis://:secret@127.0.0.1:${port}`, failFast: true });
    const started = Date.now();
    // (A call that goes through Queue.run: add's id reservation is the engine's to explain.)
    const error = await queue.cancel('some-id').catch((e: unknown) => e);
    await queue.close();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toBeInstanceOf(SkyqError);
    expect(error).toMatchObject({
      code: 'ERR_SKYQ_UNREACHABLE',
      message: `cannot reach Redis at redis://:***@127.0.0.1:${port}: connection refused`,
    });
  });

  it('rejects an invalid URL with the field named and the password hidden', () => {
    expect(() => new Queue({ redis: 'redis://:secret@' })).toThrow(
      'redis: is not a URL: expected redis://[user:password@]host[:port][/db] (got "redis://:***@")',
    );
    expect(() => new Queue({ redis: 'redis:///0' })).toThrow(
      'redis: has no host: expected redis://[user:password@]host[:port][/db] (got "redis:///0")',
    );
    expect(() => new Queue({ redis: 'ftp://u:secret@x' })).toThrow(
      /not ftp:\/\/ \(got "ftp:\/\/u:\*\*\*@x"\)/,
    );
  });
});

describe('a running launcher', () => {
  it('rides out a Redis restart without unhandled error events', async () => {
    const port = await heldPort();
    const dir = tempDir('skyq-outage-data-');
    let server = await startStandalone({ port, dir, appendonly: true });
    const start = spawnCli([
      'start',
      '--redis',
      server.url,
      '--groups',
      '3',
      '--log-dir',
      tempDir(),
    ]);
    try {
      await waitFor(
        'the launcher',
        () => (/actors? ready/.test(start.stdout()) ? true : undefined),
        30_000,
      );
      await server.stop();
      await sleep(3000); // a few seconds of reconnect attempts by 3 actors and the coordinator
      server = await startStandalone({ port, dir, appendonly: true });
      await expectServedBy(server.url, server.pid);
      // Back: a produced message is consumed (the default handler logs it).
      const produced = await finish(
        spawnCli(['produce', '--redis', server.url, '--delay', '0s']),
        'back\nquit\n',
      );
      expect(produced.code).toBe(0);
      start.child.kill('SIGINT');
      const result = await finish(start, '', 30_000);
      expect(result.code).toBe(0);
      expect(result.stderr).not.toMatch(/Unhandled error event/);
      expect(result.stderr).toBe('');
    } finally {
      start.child.kill('SIGKILL');
      await server.stop();
    }
  });
});

describe('skyq produce reading lines', () => {
  it('rides out a Redis restart: a line typed once Redis is back is added', async () => {
    const port = await heldPort();
    const dir = tempDir('skyq-produce-outage-');
    let server = await startStandalone({ port, dir });
    const produce = spawnCli(['produce', '--redis', server.url, '--delay', '1h']);
    const added = () => produce.stdout().match(/^added \S+$/gm)?.length ?? 0;
    try {
      produce.child.stdin?.write('before\n');
      await waitFor('the first line added', () => (added() === 1 ? true : undefined));
      await server.stop();
      // Longer than a one-shot command's three quick reconnects: produce keeps reconnecting.
      await sleep(3000);
      server = await startStandalone({ port, dir });
      await expectServedBy(server.url, server.pid);
      produce.child.stdin?.write('after\n');
      await waitFor('the line typed after the restart added', () =>
        added() === 2 ? true : produce.stderr() || undefined,
      ).then((outcome) => expect(outcome).toBe(true));
      const ended = await finish(produce, 'quit\n');
      expect([ended.code, ended.stderr]).toEqual([0, '']);
    } finally {
      produce.child.kill('SIGKILL');
      await server.stop();
    }
  });
});
