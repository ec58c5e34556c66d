/**
 * The `skyq` CLI as a user runs it (compiled, child processes): help of every command, stats of a
 * running launcher, dead letters (list, retry, purge), cancel, and refusal of bad flags.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Message, Queue } from '../src/index.js';
import type { LauncherStats } from '../src/runtime/launcher-stats.js';
import { startActors } from '../src/start.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { removeTempDirs, runCli, tempDir, waitFor } from './helpers/runtime.js';

let server: RedisServerHandle;

/** Runs a few children at a time: a dozen Node processes at once starve a 2-core machine. */
async function inBatches<T, R>(items: T[], work: (item: T) => Promise<R>, size = 3): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  }
  return out;
}

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('skyq --help', () => {
  it('exits 0 for the program and every command', async () => {
    const commands = [
      [],
      ['start'],
      ['produce'],
      ['stats'],
      ['logs'],
      ['get'],
      ['reschedule'],
      ['pause'],
      ['resume'],
      ['dlq'],
      ['dlq', 'list'],
      ['dlq', 'retry'],
      ['dlq', 'purge'],
      ['cancel'],
    ];
    const results = await inBatches(commands, (command) => runCli([...command, '--help']));
    results.forEach((result, i) => {
      const command = commands[i] as string[];
      expect(result.code, `${command.join(' ')} --help`).toBe(0);
      expect(result.stdout).toContain(`Usage: skyq ${command.join(' ')}`.trim());
    });
    expect(results[0]?.stdout).toMatch(
      /start[\s\S]*produce[\s\S]*stats[\s\S]*logs[\s\S]*get[\s\S]*reschedule[\s\S]*pause[\s\S]*resume[\s\S]*dlq[\s\S]*cancel/,
    );
    expect(results[1]?.stdout).toContain('--handler <module>');
    expect(results[2]?.stdout).toContain('--max-line <bytes>');
    expect(results[2]?.stdout).toContain('--json');
    expect(results[3]?.stdout).toContain('--watch [interval]');
    expect(results[5]?.stdout).toContain('Usage: skyq get [options] <id>');
    expect(results[6]?.stdout).toMatch(/--delay <duration>[\s\S]*--at <time>/);
    expect(results[7]?.stdout).toContain('--group <g>');
  });
});

describe('skyq stats', () => {
  it('lists a running launcher with its actors', async () => {
    const launcher = await startActors({ redis: server.url, logDir: tempDir(), only: [2, 5] });
    try {
      const flags = ['stats', '--redis', server.url];
      // The first figures may be from before the actors attached ('down'): wait for 'ok'.
      const found = await waitFor('the launcher in skyq stats --json', async () => {
        const run = await runCli([...flags, '--json']);
        expect(run.code).toBe(0);
        const parsed = JSON.parse(run.stdout) as { groups: unknown[]; launchers: LauncherStats[] };
        const ok = parsed.launchers[0]?.actors.every((a) => a.status === 'ok');
        return ok ? parsed : undefined;
      });
      expect(found.groups).toHaveLength(10);
      expect(found.launchers).toHaveLength(1);
      const [published] = found.launchers as [LauncherStats];
      expect(published).toMatchObject({ launcherId: launcher.id, pid: process.pid });
      expect(published.actors.map((a) => [a.group, a.status, a.stat?.state])).toEqual([
        [2, 'ok', 'running'],
        [5, 'ok', 'running'],
      ]);
      const table = await runCli(flags);
      expect(table.code).toBe(0);
      expect(table.stdout).toContain(`launcher ${launcher.id}`);
      expect(table.stdout).toMatch(/actor 5\s+running/);
    } finally {
      await launcher.stop();
    }
    // A stopped launcher withdraws its figures.
    const after = await runCli(['stats', '--redis', server.url, '--json']);
    expect(JSON.parse(after.stdout).launchers).toEqual([]);
  });
});

describe('skyq dlq and skyq cancel', () => {
  it('list, retry and purge dead letters; cancel a delayed message', async () => {
    const flags = ['--redis', server.url, '--prefix', 'dq', '--groups', '3'];
    const queue = new Queue({ redis: server.url, prefix: 'dq', groups: 3 });
    const kill = async (id: string) => {
      const [message] = await queue.claim(1, 1, 10_000);
      expect(message?.id).toBe(id);
      expect(await queue.fail(message as Message, new Error('boom'))).toBe('dead');
    };
    try {
      expect((await runCli(['dlq', 'list', ...flags])).stdout).toContain('no dead letters');
      const id = await queue.add({ order: 7 }, { group: 1, attempts: 1 });
      await kill(id);

      const listed = await runCli(['dlq', 'list', ...flags, '--json']);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject([
        { id, group: 1, attempts: 1, lastError: 'boom', body: { order: 7 } },
      ]);
      const table = await runCli(['dlq', 'list', ...flags, '--group', '1']);
      expect(table.stdout).toContain(id);
      expect(table.stdout).toContain('boom');
      expect((await runCli(['dlq', 'list', ...flags, '--group', '2'])).stdout).toContain(
        'no dead letters',
      );

      const retried = await runCli(['dlq', 'retry', ...flags, '--ids', id]);
      expect(retried.stdout).toContain('retried 1 dead letter(s)');
      expect(retried.code).toBe(0);
      expect((await queue.get(id))?.state).toBe('ready');

      await kill(id);
      const purged = await runCli(['dlq', 'purge', ...flags, '--group', '1']);
      expect(purged.stdout).toContain('purged 1 dead letter(s)');
      expect(await queue.get(id)).toBeNull();
      expect(await queue.deadLetters.list()).toEqual([]);

      const later = await queue.add('pay within 45 minutes', { delay: 45 * 60_000 });
      expect((await queue.get(later))?.state).toBe('delayed');
      const cancelled = await runCli(['cancel', later, ...flags]);
      expect(cancelled.stdout).toContain(`cancelled ${later}`);
      expect(cancelled.code).toBe(0);
      expect(await queue.get(later)).toBeNull();
      const again = await runCli(['cancel', later, ...flags]);
      expect(again.stderr).toBe(`skyq: ${later}: not found, running or dead (nothing cancelled)\n`);
      expect(again.stdout).toMatch(/^writing to redis:\/\/127\.0\.0\.1:\d+\n$/);
      expect(again.code).toBe(1);
    } finally {
      await queue.close();
    }
  });
});

describe('bad flags', () => {
  it('exit non-zero with a message naming the flag', async () => {
    const redis = ['--redis', server.url];
    const cases: [string[], RegExp][] = [
      [['produce', ...redis, '--delay', 'abc'], /delay: expected a duration/],
      [['produce', ...redis, '--count', 'lots'], /count: expected a whole number/],
      [['start', ...redis, '--concurrency', 'many'], /concurrency: expected a whole number/],
      [['start', ...redis, '--lease', 'soon'], /lease: expected a duration/],
      [['logs', '--level', 'loud', '--log-dir', tempDir()], /level: expected trace, debug/],
      [['stats', ...redis, '--groups', 'x'], /groups: expected a whole number/],
      [['stats', '--redis', 'http://nope'], /redis: must be a redis:\/\/ or rediss:\/\/ URL/],
      [['dlq', 'list', ...redis, '--limit', '-3'], /limit: expected a whole number/],
      [['cancel', ...redis], /missing required argument 'id'/],
      [['produce', ...redis, '--no-such-flag'], /unknown option '--no-such-flag'/],
      // An empty or garbled list must not run group 0 (Number('') is 0).
      [['start', ...redis, '--only', ','], /only: expected group numbers separated by commas/],
      [['start', ...redis, '--only', '1,,2'], /only: expected group numbers separated by commas/],
      [['start', ...redis, '--only', ''], /only: expected group numbers separated by commas/],
      [
        ['start', ...redis, '--log-level', 'bogus'],
        /log-level: expected one of trace, debug, info/,
      ],
      [['start', ...redis, '--lease', '30'], /lease: expected a duration with a unit: 500ms, 5s/],
      [['stats', ...redis, '--watch', '10ms'], /watch: must be at least 100ms/],
      [['get', ...redis], /missing required argument 'id'/],
      // The flag's own name, not the library's option (scoreUnit).
      [['stats', ...redis, '--score-unit', 'h'], /^skyq: score-unit: expected ms, cs or s/],
    ];
    const results = await inBatches(cases, ([args]) => runCli(args));
    results.forEach((result, i) => {
      const [args, message] = cases[i] as [string[], RegExp];
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      // One clear line, not a stack from deep inside an actor.
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
      expect(result.stdout, args.join(' ')).not.toMatch(/actors? ready/);
    });
  });
});
