/**
 * The stdin producer end to end, like the original demo: lines become messages (an over-long
 * line is refused, `quit` ends), a `skyq start` child consumes them, `skyq logs` shows them
 * readably, and SIGTERM drains and exits 0.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKeys, Queue } from '../src/index.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  type CliChild,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
  waitFor,
} from './helpers/runtime.js';

let server: RedisServerHandle;
let client: Redis;
let starter: CliChild | undefined;

beforeAll(async () => {
  server = await startStandalone();
  client = new Redis(server.url);
});

afterAll(async () => {
  starter?.child.kill('SIGKILL');
  client?.disconnect();
  await server?.stop();
  removeTempDirs();
});

describe('skyq produce | skyq start | skyq logs', () => {
  it('adds stdin lines, refuses an over-long one, stops at quit; start consumes, logs shows them', async () => {
    const flags = ['--redis', server.url, '--groups', '2'];
    const input = ['hello one', 'x'.repeat(2000), 'hello two', '', 'quit', 'after quit', ''].join(
      '\n',
    );
    const produced = await runCli(['produce', ...flags, '--delay', '0'], input);
    expect(produced.stderr).toContain('refused line 2: line of 2000 bytes is over --max-line 1024');
    expect(produced.stderr).toContain('skyq: refused 1 of 3 line(s)');
    expect(produced.code).toBe(1); // a refused line is a failure a script must see
    const ids = [...produced.stdout.matchAll(/^added (\S+)$/gm)].map((m) => m[1] as string);
    expect(ids).toHaveLength(2);
    const [one, two] = ids as [string, string];

    const queue = new Queue({ redis: server.url, groups: 2 });
    try {
      expect((await queue.get(one))?.body).toBe('hello one');
      expect((await queue.get(two))?.body).toBe('hello two');
      const counts = await queue.counts();
      expect(counts.reduce((sum, c) => sum + c.ready + c.delayed, 0)).toBe(2); // not 'after quit'

      // A record nobody can read: the actor dead-letters it with a warning.
      const [, ready, , , msg, due] = groupKeys('task_group', 0) as string[];
      await client.hset(msg as string, 'broken1', 'not a record');
      await client.hset(due as string, 'broken1', '0');
      await client.zadd(ready as string, 0, '00000000000broken1'); // due 0, then the id

      const logDir = tempDir();
      starter = spawnCli(['start', ...flags, '--log-dir', logDir]);
      await waitFor('start to be ready', () =>
        /2 actors ready/.test(starter?.stdout() ?? '') ? true : undefined,
      );
      await waitFor('the queue to empty', async () => {
        const now = await queue.counts();
        return now.every((c) => c.ready + c.delayed + c.active === 0) ? true : undefined;
      });

      const group = one.split(':')[0] as string;
      const logs = await waitFor('the consumed line in the log', async () => {
        const run = await runCli(['logs', '--actor', group, '--log-dir', logDir]);
        return run.stdout.includes('hello one') ? run : undefined;
      });
      expect(logs.code).toBe(0);
      const consumed = logs.stdout.split('\n').find((line) => line.includes(`job=${one}`));
      expect(consumed).toMatch(
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  actor ${group} consumed job=${one} body=hello one lateMs=[\\d.]+$`,
        ),
      );
      expect(logs.stdout).toMatch(new RegExp(`INFO  actor ${group} started concurrency=`));

      const byJob = await runCli(['logs', '--job', two, '--log-dir', logDir]);
      const jobLines = byJob.stdout.trim().split('\n');
      expect(jobLines.length).toBeGreaterThan(0);
      expect(jobLines.every((line) => line.includes(`job=${two}`))).toBe(true);
      expect(byJob.stdout).toContain('hello two');
      expect(byJob.stdout).not.toContain('hello one');

      const warned = await waitFor('the warning about the broken record', async () => {
        const run = await runCli(['logs', '--level', 'warn', '--log-dir', logDir]);
        return run.stdout.includes('broken1') ? run : undefined;
      });
      expect(warned.stdout).toMatch(
        /WARN {2}actor 0 malformed message dead-lettered job=broken1 reason=/,
      );
      expect(warned.stdout).not.toMatch(/INFO/);
      expect(warned.stdout).not.toContain('hello');
      expect((await queue.deadLetters.list()).map((d) => d.id)).toEqual(['broken1']);

      starter.child.kill('SIGTERM');
      const ended = await starter.done;
      expect(ended.stdout).toContain('skyq: stopped');
      expect(ended.code).toBe(0);
    } finally {
      await queue.close();
    }
  });
});
