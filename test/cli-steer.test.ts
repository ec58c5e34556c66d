/**
 * Looking at and steering single messages and groups from the CLI: `skyq get`, `skyq
 * reschedule`, `skyq pause` / `skyq resume` (honoured by a running launcher). The compiled
 * CLI as a child against a private redis-server.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { closedAfterFile } from './helpers/queue.js';
import {
  fixture,
  recorded,
  runCli,
  tempDir,
  untilClaimed,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** A write command's output after its first line (`writing to <redis>`), which it checks. */
function withoutWhere(stdout: string): string {
  const [where, ...rest] = stdout.trim().split('\n');
  expect(where).toMatch(/^writing to redis:\/\//);
  return rest.join('\n');
}
let prefixes = 0;
/** Every Queue space() made, closed before the server stops (a test that takes only the flags
 * leaves its own open). */
const keep = closedAfterFile();

function space(groups = 4) {
  const prefix = `st${++prefixes}`;
  const flags = ['--redis', redis.server.url, '--prefix', prefix, '--groups', String(groups)];
  return { prefix, flags, queue: keep(new Queue({ redis: redis.server.url, prefix, groups })) };
}

describe('skyq get', () => {
  it('shows state, due time, attempts, last error, dead reason and a body preview', async () => {
    const { flags, queue } = space();
    try {
      const id = await queue.add(
        { order: 7, note: 'x'.repeat(500) },
        { delay: 60_000, priority: 4 },
      );
      const shown = await runCli(['get', id, ...flags]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`^id +${id}$`, 'm'));
      expect(shown.stdout).toMatch(/^state +delayed$/m);
      expect(shown.stdout).toMatch(/^due +\d{4}-\d\d-\d\dT[\d:.]+Z \(in (5\d|60)\.\d s\)$/m);
      expect(shown.stdout).toMatch(/^priority +4$/m);
      expect(shown.stdout).toMatch(/^attempts +0 of 3$/m);
      expect(shown.stdout).toMatch(/^last error +-$/m);
      const body = /^body +(.*)$/m.exec(shown.stdout)?.[1] ?? '';
      expect(body.startsWith('{"order":7,"note":"xxx')).toBe(true);
      expect(body.length).toBeLessThanOrEqual(200); // a preview, not 500 characters

      // A dead letter: its last error and reason; --json has the whole record.
      const dead = await queue.add('\u001b[2Jclear the screen', { group: 1, attempts: 1 });
      const [message] = await queue.claim(1, 1, 10_000);
      expect(message?.id).toBe(dead);
      await queue.fail(message as NonNullable<typeof message>, new Error('payment service down'));
      const text = await runCli(['get', dead, ...flags]);
      expect(text.stdout).toMatch(/^state +dead$/m);
      expect(text.stdout).toMatch(/^attempts +1 of 1$/m);
      expect(text.stdout).toMatch(/^last error +payment service down$/m);
      expect(text.stdout).toMatch(/^dead reason +\S+/m);
      expect(text.stdout).not.toContain('\u001b'); // escaped: a body cannot drive the terminal
      expect(text.stdout).toContain('"\\u001b[2Jclear the screen"');
      const json = await runCli(['get', dead, ...flags, '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({
        id: dead,
        group: 1,
        state: 'dead',
        attempts: 1,
        lastError: 'payment service down',
        body: '\u001b[2Jclear the screen',
      });
    } finally {
      await queue.close();
    }
  });

  it('says so and exits 1 for an unknown id', async () => {
    const { flags } = space();
    const unknown = await runCli(['get', 'no-such-id', ...flags]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('skyq: no message no-such-id');
    // Only the Redis it read, which a miss makes worth seeing (cli-where-refused.test.ts).
    expect(unknown.stdout).toMatch(/^reading redis:\/\/\S+\n$/);
    // Foreign producers' members may hold spaces: such an id is looked up, not refused.
    const spaced = await runCli(['get', 'has space', ...flags]);
    expect(spaced.code).toBe(1);
    expect(spaced.stderr).toContain('skyq: no message has space');
  });
});

describe('skyq reschedule', () => {
  it('moves a message by --delay or --at, and refuses neither, both, or a bad time', async () => {
    const { flags, queue } = space();
    try {
      const id = await queue.add('later', { delay: 3_600_000 });
      const before = Date.now();
      const sooner = await runCli(['reschedule', id, ...flags, '--delay', '2m']);
      expect(sooner.code).toBe(0);
      expect(sooner.stdout).toMatch(
        new RegExp(`^rescheduled ${id}: due \\S+ \\(in (1\\.9|2\\.0) min\\)$`, 'm'),
      );
      const due = (await queue.get(id))?.dueAt ?? 0;
      expect(due).toBeGreaterThanOrEqual(before + 119_000);
      expect(due).toBeLessThan(before + 130_000);

      const iso = await runCli(['reschedule', id, ...flags, '--at', '2030-01-31T09:00:00Z']);
      expect(iso.code).toBe(0);
      expect((await queue.get(id))?.dueAt).toBe(Date.parse('2030-01-31T09:00:00Z'));
      const epoch = await runCli(['reschedule', id, ...flags, '--at', '1900000000000']);
      expect(epoch.stdout).toContain('due 2030-03-17T17:46:40.000Z');
      expect((await queue.get(id))?.dueAt).toBe(1_900_000_000_000);
      const now = await runCli(['reschedule', id, ...flags, '--delay', '0']);
      expect(now.code).toBe(0);
      expect((await queue.get(id))?.dueAt).toBeLessThanOrEqual(Date.now() + 1000);

      const cases: [string[], RegExp][] = [
        [[], /give exactly one of --delay and --at/],
        [['--delay', '1s', '--at', '1900000000000'], /give exactly one of --delay and --at/],
        [['--delay', '10'], /delay: expected a duration with a unit/],
        [['--at', 'tomorrow'], /at: expected an ISO time/],
        // Date.parse rolls a day the month lacks over into the next month: refused instead.
        [
          ['--at', '2027-02-30T09:00Z'],
          /^skyq: at: 2027-02 has no day 30 \(got "2027-02-30T09:00Z"\)$/m,
        ],
        [['--at', '2027-04-31T09:00Z'], /^skyq: at: 2027-04 has no day 31 /],
        [['--at', '2027-02-29'], /^skyq: at: 2027-02 has no day 29 \(got "2027-02-29"\)$/m],
        [['--at', '2027-13-01'], /^skyq: at: expected an ISO time/],
      ];
      for (const [args, message] of cases) {
        const run = await runCli(['reschedule', id, ...flags, ...args]);
        expect(run.code, args.join(' ')).toBe(1);
        expect(run.stderr, args.join(' ')).toMatch(message);
        expect(run.stdout, args.join(' ')).not.toMatch(/rescheduled/);
      }
      const gone = await runCli(['reschedule', 'nobody', ...flags, '--delay', '1s']);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain('nobody: not found, running or dead (nothing rescheduled)');
    } finally {
      await queue.close();
    }
  });

  it("refuses to push a schedule's pending occurrence back, in one line; --delay 0 runs it", async () => {
    const { flags, queue } = space();
    try {
      const startAt = Date.now() + 600_000;
      const made = await queue.schedules.upsert('rsc', { every: '3s', startAt });
      const occ = `schedule:rsc:${made.next}`;
      const later = await runCli(['reschedule', occ, ...flags, '--delay', '20m']);
      expect(later.code, later.stdout + later.stderr).toBe(1);
      expect(later.stderr.split('\n')[0]).toMatch(
        /^skyq: id: is schedule rsc's next occurrence, which can run sooner but not later: .*upsert it \(got "schedule:rsc:\d+"\)$/,
      );
      expect(later.stdout).toBe('');
      expect((await queue.get(occ))?.dueAt).toBe(made.next);
      const now = await runCli(['reschedule', occ, ...flags, '--delay', '0']);
      expect(now.code, now.stderr).toBe(0);
      expect((await queue.get(occ))?.dueAt).toBeLessThanOrEqual(Date.now() + 1000);
    } finally {
      await queue.close();
    }
  });
});

describe('skyq pause and resume', () => {
  it('say what changed, and a running launcher stops and restarts consuming', async () => {
    const { prefix, flags, queue } = space(2);
    const list = `${prefix}:handled`;
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      logDir: tempDir(),
      handler: fixture('record.mjs'),
    });
    try {
      const paused = await runCli(['pause', ...flags, '--group', '1']);
      expect(paused.code).toBe(0);
      expect(withoutWhere(paused.stdout)).toBe(`paused ${prefix}:1`);
      const again = await runCli(['pause', ...flags, '--group', '1']);
      expect(withoutWhere(again.stdout)).toBe(`${prefix}:1 already paused: nothing changed there`);
      const held = await queue.add({ list, note: 'waits for resume' }, { group: 1 });
      const through = await queue.add({ list, note: 'group 0 runs' }, { group: 0 });
      await waitFor('group 0 to run', async () =>
        (await recorded(redis.client, list)).includes(through) ? true : undefined,
      );
      const stats = await waitFor('the actor to see the pause (the add woke it)', async () => {
        const run = await runCli(['stats', ...flags]);
        return /actor 1\s+paused/.test(run.stdout) ? run : undefined;
      });
      expect(stats.stdout).toMatch(new RegExp(`^${prefix}:1 .* paused$`, 'm'));

      // The claim that saw the pause may have run before the add: one more after it (adds to a
      // paused group wake nobody). Whatever it leased would start at once; a message added after
      // it, in the group not paused, is handled by then.
      await untilClaimed(redis.client, prefix, 1);
      const later = await queue.add({ list, note: 'after the pause was seen' }, { group: 0 });
      await waitFor('a later message of group 0 to run', async () =>
        (await recorded(redis.client, list)).includes(later) ? true : undefined,
      );
      expect(await recorded(redis.client, list)).not.toContain(held);
      expect((await queue.get(held))?.state).toBe('ready');

      const resumed = await runCli(['resume', ...flags]);
      expect(withoutWhere(resumed.stdout).split('\n')).toEqual([
        `resumed ${prefix}:1`,
        '1 group(s) not paused: nothing changed there',
      ]);
      await waitFor('the paused message to run', async () =>
        (await recorded(redis.client, list)).includes(held) ? true : undefined,
      );
      const all = await runCli(['pause', ...flags]);
      expect(withoutWhere(all.stdout)).toBe(`paused 2 groups (${prefix}:0,1)`);
      const bad = await runCli(['pause', ...flags, '--group', '5']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/group: must be a group number from 0 to 1 \(got 5\)/);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
