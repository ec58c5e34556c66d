/**
 * What `skyq produce` accepts and refuses: JSON lines, --priority / --key / --delay in every
 * mode, bytes that are not UTF-8, bare numbers for durations, --count 0, the --spread bound,
 * and spreading messages over the groups. The compiled CLI against a private redis-server.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashString } from '../src/base/keys.js';
import { readLines } from '../src/cli/stdin-lines.js';
import { homeGroup, Queue } from '../src/index.js';
import { closedAfterFile } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { spawnCli } from './helpers/runtime.js';

let server: RedisServerHandle;
let prefixes = 0;

beforeAll(async () => {
  server = await startStandalone();
});
afterAll(async () => {
  await server?.stop();
});
/** Every Queue space() made, closed before the server stops. */
const keep = closedAfterFile();

/** A fresh prefix, its CLI flags and a Queue on it. */
function space(groups = 10) {
  const prefix = `pi${++prefixes}`;
  const flags = ['--redis', server.url, '--prefix', prefix, '--groups', String(groups)];
  return { flags, queue: keep(new Queue({ redis: server.url, prefix, groups })) };
}

/** Runs produce with raw bytes on stdin; kills it after 30 s. */
async function produce(args: string[], input: string | Buffer = '') {
  const run = spawnCli(['produce', ...args]);
  run.child.stdin?.on('error', () => undefined); // a refused flag exits before reading
  run.child.stdin?.end(input);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 30_000);
  try {
    return await run.done;
  } finally {
    clearTimeout(timer);
  }
}

const addedIds = (stdout: string) =>
  [...stdout.matchAll(/^added (\S+)$/gm)].map((m) => m[1] as string);

describe('produce --json', () => {
  it('adds each object with its own delay, priority, key and id; refuses bad lines by number', async () => {
    const { flags, queue } = space();
    try {
      const lines = [
        '{"body":{"order":7},"delay":"2m","priority":3}',
        '{"body":"plain text","delay":1500,"key":"customer-9"}',
        '{"body":[1,2],"id":"order:42"}',
        '{"body":1,"colour":"red"}',
        '{"delay":"5s"}',
        'not json',
        '{"body":1,"delay":"5"}',
        '{"body":1,"priority":-1}',
        '[1]',
        '{"body":null,"priority":9}',
      ];
      const before = Date.now();
      const run = await produce([...flags, '--json', '--delay', '1h'], `${lines.join('\n')}\n`);
      expect(run.code).toBe(1);
      const ids = addedIds(run.stdout);
      expect(ids).toHaveLength(4);
      const [first, second, third, fourth] = (await Promise.all(
        ids.map((id) => queue.get(id)),
      )) as NonNullable<Awaited<ReturnType<Queue['get']>>>[];
      expect(first).toMatchObject({ body: { order: 7 }, priority: 3, state: 'delayed' });
      expect(first.dueAt).toBeGreaterThanOrEqual(before + 119_000);
      expect(first.dueAt).toBeLessThan(before + 125_000);
      expect(second).toMatchObject({ body: 'plain text', group: hashString('customer-9') % 10 });
      expect(second.dueAt).toBeLessThan(before + 10_000); // the line's 1500 ms, not --delay 1h
      expect(third).toMatchObject({
        id: 'order:42',
        body: [1, 2],
        group: homeGroup('order:42', 10),
      });
      expect(third.dueAt).toBeGreaterThanOrEqual(before + 3_599_000); // --delay is the default
      expect(fourth).toMatchObject({ body: null, priority: 9 });
      const refused = run.stderr.trim().split('\n');
      expect(refused).toEqual([
        'refused line 4: colour: unknown field (the fields are body, delay, priority, key, id, name, dedupe)',
        'refused line 5: body: is missing',
        expect.stringMatching(/^refused line 6: line: is not JSON: /),
        'refused line 7: delay: expected a duration with a unit: 500ms, 5s, 2m or 1h (got "5")',
        'refused line 8: priority: must be between 0 and 1000000 (got -1)',
        'refused line 9: line: must be a JSON object with body, delay, priority, key, id, name, dedupe',
        'skyq: refused 6 of 10 line(s)',
      ]);
    } finally {
      await queue.close();
    }
  });
});

describe('produce lines', () => {
  it('keeps UTF-8 lines byte for byte, refuses other bytes, and applies --priority and --key', async () => {
    const { flags, queue } = space();
    try {
      const input = Buffer.concat([
        Buffer.from('héllo ✓ 日本\n'),
        Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x0a]), // "bad" + bytes no UTF-8 text has
        Buffer.from('windows line\r\n'),
        Buffer.from([0xe2, 0x82, 0x0a]), // a character cut short
        Buffer.from('last, without newline'),
      ]);
      const run = await produce([...flags, '--delay', '0', '--priority', '5', '--key', 'k'], input);
      expect(run.stderr).toContain(
        'refused line 2: line is not valid UTF-8 (refused, not altered)',
      );
      expect(run.stderr).toContain('refused line 4: line is not valid UTF-8');
      expect(run.stderr).toContain('skyq: refused 2 of 5 line(s)');
      expect(run.code).toBe(1);
      const infos = await Promise.all(addedIds(run.stdout).map((id) => queue.get(id)));
      expect(infos.map((info) => info?.body)).toEqual([
        'héllo ✓ 日本',
        'windows line',
        'last, without newline',
      ]);
      expect(infos.every((info) => info?.priority === 5)).toBe(true);
      expect(new Set(infos.map((info) => info?.group))).toEqual(new Set([hashString('k') % 10]));
    } finally {
      await queue.close();
    }
  });

  it('spreads lines and --count messages over every group', async () => {
    const { flags, queue } = space(5);
    try {
      const lines = await produce([...flags, '--delay', '0'], 'a\nb\nc\nd\ne\n');
      expect(lines.code).toBe(0);
      const groups = await Promise.all(addedIds(lines.stdout).map((id) => queue.get(id)));
      expect(new Set(groups.map((info) => info?.group)).size).toBe(5);
      const load = await produce([...flags, '--count', '20', '--at-once']);
      expect(load.code).toBe(0);
      const counts = (await queue.counts()).map((c) => c.ready + c.delayed);
      // 5 lines, one in each group; then 20 messages, a small batch: one call, one group.
      expect(counts.reduce((a, b) => a + b, 0)).toBe(25);
      expect(counts.filter((n) => n === 21)).toHaveLength(1);
      expect(counts.filter((n) => n === 1)).toHaveLength(4);
    } finally {
      await queue.close();
    }
  });
  it('starts each process at a random group, so one-message producers do not all hit group 0', async () => {
    const { flags, queue } = space();
    try {
      // Six processes, one message each (by line and by --count): all in one group by chance
      // has a probability of 1 in 100,000.
      const runs = [];
      for (let i = 0; i < 3; i++) {
        runs.push(
          ...(await Promise.all([
            produce([...flags, '--delay', '0'], 'one line\n'),
            produce([...flags, '--count', '1']),
          ])),
        );
      }
      expect(runs.every((run) => run.code === 0)).toBe(true);
      const counts = await queue.counts();
      expect(counts.reduce((sum, c) => sum + c.ready + c.delayed, 0)).toBe(6);
      expect(counts.filter((c) => c.ready + c.delayed > 0).length).toBeGreaterThan(1);
    } finally {
      await queue.close();
    }
  });
});

describe('produce --count', () => {
  it('honours --delay, --priority and --key; prints no NaN for 0; bounds --spread', async () => {
    const { flags, queue } = space();
    try {
      const before = Date.now();
      const run = await produce([
        ...flags,
        ...['--count', '4', '--delay', '1h', '--spread', '1s', '--priority', '7', '--key', 'k'],
      ]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^added 4 messages in [\d.]+ s \(\d+\/s\), due over 1s, added over the spread$/m,
      );
      const group = hashString('k') % 10;
      const counts = await queue.counts();
      expect(counts.map((c) => c.delayed)).toEqual(counts.map((c) => (c.group === group ? 4 : 0)));
      const [[id]] = [await queue.client.zrange(`${queue.config.prefix}:${group}`, 0, 0)] as [
        string[],
      ];
      const info = await queue.get(id as string);
      expect(info?.priority).toBe(7);
      expect(info?.dueAt).toBeGreaterThanOrEqual(before + 3_599_000);

      const none = await produce([...flags, '--count', '0']);
      expect(none.code).toBe(0);
      expect(none.stdout).toMatch(
        /^added 0 messages in [\d.]+ s, due over 5s, added over the spread$/m,
      );
      expect(none.stdout).not.toContain('NaN');
    } finally {
      await queue.close();
    }
  });

  it('adds in due order over the spread, the first due in a small first call ahead of them; --at-once adds now', async () => {
    const { flags, queue } = space();
    try {
      const run = await produce([...flags, '--count', '3000', '--spread', '1s']);
      expect(run.code).toBe(0);
      // Every message's due time, and when Redis took it (its clock, both).
      const due: [string, number][] = [];
      for (let group = 0; group < 10; group++) {
        const key = `${queue.config.prefix}:${group}`;
        const flat = await queue.client.zrange(key, 0, -1, 'WITHSCORES');
        for (let i = 0; i < flat.length; i += 2) due.push([flat[i] as string, Number(flat[i + 1])]);
      }
      expect(due).toHaveLength(3000);
      due.sort((a, b) => a[1] - b[1]);
      const sample = due.filter((_, i) => i % 30 === 0 || i === due.length - 1);
      const infos = await Promise.all(sample.map(([id]) => queue.get(id)));
      const added = infos.map((info) => info?.enqueuedAt as number);
      // In due order: what falls due later never went in earlier.
      for (let i = 1; i < added.length; i++) {
        expect(added[i]).toBeGreaterThanOrEqual(added[i - 1] as number);
      }
      // The first due were in before the last were made: not one call for the whole spread.
      expect(added[0]).toBeLessThan(added.at(-1) as number);
      // The first call goes ahead of its messages too (100 ms): they were due at the start, and
      // went in after it from a process just started, the latest of a run into `skyq start`.
      expect((due[0]?.[1] as number) - (added[0] as number)).toBeGreaterThan(30);
      // And spread evenly: each tenth of the second holds about a tenth of the messages.
      const from = due[0]?.[1] as number;
      const tenths = Array.from({ length: 10 }, (_, t) =>
        due.filter(([, at]) => Math.floor((at - from) / 100) === t),
      );
      // (300 each as made; a call that goes in late on a loaded machine stores its past due
      // times as due now, the add's rule, which moves some into a later tenth: 239 seen in CI.)
      for (const tenth of tenths) expect(tenth.length).toBeGreaterThan(200);
      // Paced: what falls due in the second half went in well after the first (at once, the
      // whole spread is in within a few dozen ms).
      due.forEach(([, at], i) => {
        if (i % 30 === 0 && at - from > 600) {
          expect((added[i / 30] as number) - (added[0] as number)).toBeGreaterThanOrEqual(300);
        }
      });

      // --at-once: an hour's spread is in at once (paced, that would take the hour).
      const atOnce = await produce([...flags, '--count', '500', '--spread', '1h', '--at-once']);
      expect(atOnce.code).toBe(0);
      expect(atOnce.stdout).toMatch(
        /^added 500 messages in [\d.]+ s \(\d+\/s\), due over 1h, at once$/m,
      );
      // A paced run longer than 10 s says so first (one message: in at once, all the same).
      const long = await produce([...flags, '--count', '1', '--spread', '20s']);
      expect(long.stdout).toMatch(
        /^adding over 20s, as they fall due \(--at-once adds them all now\)$/m,
      );
      const alone = await produce([...flags, '--at-once'], 'x\n');
      expect(alone.code).toBe(1);
      expect(alone.stderr).toMatch(/at-once: only goes with --count/);
    } finally {
      await queue.close();
    }
  });

  it('refuses a bare number for a duration, in every mode, naming the units', async () => {
    const { flags } = space();
    const cases: [string[], RegExp][] = [
      [['--delay', '5'], /delay: expected a duration with a unit: 500ms, 5s, 2m or 1h \(got "5"\)/],
      [['--count', '3', '--delay', '5'], /delay: expected a duration with a unit/],
      [['--count', '3', '--delay', 'soon'], /delay: expected a duration with a unit/],
      [['--count', '3', '--spread', '100'], /spread: expected a duration with a unit/],
      [['--count', '3', '--spread', '25h'], /spread: must be at most 24h \(got "25h"\)/],
      [['--count', '3', '--priority', 'high'], /priority: expected a whole number/],
    ];
    for (const [args, message] of cases) {
      const run = await produce([...flags, ...args], 'never read\n');
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toMatch(message);
      expect(run.stdout, args.join(' ')).not.toMatch(/added/);
    }
  });
});

describe('--max-line', () => {
  it('counts a line without its CRLF end, as without a plain newline', async () => {
    const a = (n: number) => 'a'.repeat(n);
    // Two chunks, the second starting with the first's "\n": a CRLF split between reads.
    const input = Readable.from([`${a(8)}\r`, `\n${a(9)}\r\n${a(8)}\n${a(9)}\n${a(8)}\r`]);
    const read = [];
    for await (const line of readLines(input, 8)) read.push(line);
    const over = { problem: 'line of 9 bytes is over --max-line 8' };
    expect(read).toEqual([
      { number: 1, text: a(8) },
      { number: 2, ...over },
      { number: 3, text: a(8) },
      { number: 4, ...over },
      { number: 5, text: a(8) },
    ]);
  });
});
