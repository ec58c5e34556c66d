/**
 * `skyq dlq` as an operator meets it: `purge` with no selection asks first on a terminal (and
 * refuses with one line where nobody can answer), `retry --ids` names the ids it did not find,
 * `list` lines its text columns up on the left, `list --ids` shows just those letters, and an
 * empty `--ids` is refused (it retried every dead letter).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { type Body, type Message, Queue } from '../src/index.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { CLI, type CliResult, removeTempDirs, runCli } from './helpers/runtime.js';

let server: RedisServerHandle;
let queue: Queue;
let flags: string[];
let prefix = 0;

beforeAll(async () => {
  server = await startStandalone();
});

beforeEach(async () => {
  // A fresh prefix per case: no case sees another's dead letters.
  prefix += 1;
  await queue?.close();
  queue = new Queue({ redis: server.url, prefix: `dlq${prefix}`, groups: 3 });
  flags = ['--redis', server.url, '--prefix', `dlq${prefix}`, '--groups', '3'];
});

afterAll(async () => {
  await queue?.close();
  await server?.stop();
  removeTempDirs();
});

/** Adds a message to `group` and fails its only attempt: a dead letter with `error`. */
async function deadLetter(group: number, error: string, body: Body = 'x'): Promise<string> {
  const id = await queue.add(body, { group, attempts: 1 });
  const [message] = await queue.claim(group, 1, 10_000);
  expect(message?.id).toBe(id);
  expect(await queue.fail(message as Message, new Error(error))).toBe('dead');
  return id;
}

/** The CLI on a pseudo-terminal (util-linux `script`), `answer` typed at it. */
function onTerminal(args: string[], answer: string): Promise<CliResult> {
  const line = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qec', line, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    // Answer once the question is on the screen, as a person would.
    if (chunk.includes('[y/N]')) child.stdin.end(answer);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

it('purge with no selection refuses in one line where nobody can answer, and purges with --yes', async () => {
  await deadLetter(0, 'boom');
  await deadLetter(2, 'boom');
  const refused = await runCli(['dlq', 'purge', ...flags]);
  expect(refused.code).toBe(1);
  expect(refused.stdout).toBe('');
  expect(refused.stderr).toBe(
    'skyq: dlq purge with no --group or --ids deletes every dead letter; stdin is not a terminal to ask, so nothing was purged: add --yes\n',
  );
  expect(await queue.deadLetters.list()).toHaveLength(2);

  const yes = await runCli(['dlq', 'purge', ...flags, '--yes']);
  expect(yes.stderr).toBe('');
  expect(yes.stdout).toContain('purged 2 dead letter(s)');
  expect(await queue.deadLetters.list()).toEqual([]);
});

it('purge with no selection asks on a terminal: no keeps them, y purges them', async () => {
  await deadLetter(0, 'boom');
  await deadLetter(1, 'boom');
  await deadLetter(2, 'boom');
  const kept = await onTerminal(['dlq', 'purge', ...flags], 'n\n');
  expect(kept.code, kept.stdout).toBe(0);
  expect(kept.stdout).toContain('purge all 3 dead letter(s) in every group, for good? [y/N]');
  expect(kept.stdout).toContain('purged nothing');
  expect(await queue.deadLetters.list()).toHaveLength(3);

  const purged = await onTerminal(['dlq', 'purge', ...flags], 'y\n');
  expect(purged.code, purged.stdout).toBe(0);
  expect(purged.stdout).toContain('purged 3 dead letter(s)');
  expect(await queue.deadLetters.list()).toEqual([]);

  // A selection is an explicit choice: nothing to ask.
  await deadLetter(1, 'boom');
  const group = await runCli(['dlq', 'purge', ...flags, '--group', '1']);
  expect(group.stdout).toContain('purged 1 dead letter(s)');
});

it('retry --ids retries the dead ones and names the ids it did not find', async () => {
  const dead = await deadLetter(1, 'boom');
  const waiting = await queue.add('not dead', { group: 2, delay: 60_000 });
  const run = await runCli(['dlq', 'retry', ...flags, '--ids', `${dead},nope,${waiting}`]);
  expect(run.stdout).toContain('retried 1 dead letter(s)');
  expect(run.stderr).toBe(`skyq: not found among the dead letters: nope, ${waiting}\n`);
  expect(run.code).toBe(1);
  expect((await queue.get(dead))?.state).toBe('ready');
  expect((await queue.get(waiting))?.state).toBe('delayed');

  // The library says the same: act() names them, retry() still counts.
  const again = await deadLetter(0, 'boom');
  expect(await queue.deadLetters.act('purge', { ids: [again, 'gone'] })).toEqual({
    count: 1,
    notFound: ['gone'],
  });
  const all = await runCli(['dlq', 'retry', ...flags, '--ids', dead, '--group', '1']);
  expect(all.stderr).toBe(`skyq: not found among the dead letters in group 1: ${dead}\n`);
});

it('list left-aligns its text columns and right-aligns its figures', async () => {
  await deadLetter(0, 'a short one', 'b');
  await deadLetter(1, 'a much longer last error than the other', { order: 12345 });
  const run = await runCli(['dlq', 'list', '--order', 'oldest', ...flags]);
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.trimEnd().split('\n').slice(1); // after "reading redis://…"
  const [header, , ...rows] = lines as [string, string, ...string[]];
  expect(rows).toHaveLength(2);
  const column = (name: string) => header.indexOf(name);
  for (const [name, texts] of [
    ['last error', ['a short one', 'a much longer last error']],
    ['body', ['b', '{"order":12345}']],
  ] as const) {
    for (const [i, text] of texts.entries()) {
      // The last match: a one-letter body may also appear in the generated id.
      expect(rows[i]?.lastIndexOf(text), `${name} of row ${i}:\n${run.stdout}`).toBe(column(name));
    }
  }
  // Figures stay right-aligned: the attempts column ends under its header's end.
  const end = column('attempts') + 'attempts'.length;
  for (const row of rows) expect(row.slice(end - 1, end)).toBe('1');
});

it("list's more: hint keeps --group, --limit, where Redis is and the queue's layout, and leads to the next page", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await deadLetter(2, `boom ${i}`));
  await deadLetter(1, 'elsewhere');
  const first = await runCli(['dlq', 'list', ...flags, '--group', '2', '--limit', '2']);
  expect(first.code, first.stderr).toBe(0);
  const more = first.stdout.trimEnd().split('\n').at(-1) as string;
  const layout = `--redis ${server.url} --prefix dlq${prefix} --groups 3`;
  expect(more).toMatch(
    new RegExp(`^more: skyq dlq list ${layout} --group 2 --limit 2 --after \\S+$`),
  );
  // What it says, run as said, is the rest of group 2 (newest first: the oldest letter), and
  // only that.
  const again = more.replace(/^more: skyq /, '').split(' ');
  const next = await runCli(again);
  expect(next.code, next.stderr).toBe(0);
  const rows = next.stdout.split('\n').filter((line) => line.includes(':'));
  expect(rows.some((row) => row.includes(ids[0] as string))).toBe(true);
  expect(next.stdout).not.toContain('elsewhere');
  expect(next.stdout).not.toContain('more:');
});

it('list --ids lists only those dead letters and names the ids that were none', async () => {
  const first = await deadLetter(0, 'first', 'one');
  const second = await deadLetter(2, 'second', 'two');
  const other = await deadLetter(1, 'other');
  const waiting = await queue.add('not dead', { group: 1, delay: 60_000 });
  const run = await runCli(['dlq', 'list', ...flags, '--ids', `${first},${second}`]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
  const rows = run.stdout.trimEnd().split('\n').slice(3); // after "reading …", header, rule
  expect(rows).toHaveLength(2);
  // Newest first, as a page is.
  expect(rows[0]).toContain(second);
  expect(rows[0]).toContain('two');
  expect(rows[1]).toContain(first);
  expect(run.stdout).not.toContain(other);

  const json = await runCli(
    ['dlq', 'list', ...flags, '--json', '--order', 'oldest', '--ids'].concat(
      `${other},nope,${waiting},${first}`,
    ),
  );
  expect(json.code).toBe(1);
  expect(json.stderr).toBe(`skyq: not found among the dead letters: nope, ${waiting}\n`);
  const letters = JSON.parse(json.stdout) as { id: string; group: number; lastError: string }[];
  expect(letters.map((l) => [l.id, l.group, l.lastError])).toEqual([
    [first, 0, 'first'],
    [other, 1, 'other'],
  ]);
  expect(letters[0]).toMatchObject({ reason: expect.any(String), attempts: 1, body: 'one' });

  const inGroup = await runCli(['dlq', 'list', ...flags, '--group', '2', '--ids', `${first}`]);
  expect(inGroup.stderr).toBe(`skyq: not found among the dead letters in group 2: ${first}\n`);
  expect(inGroup.stdout).toContain('no dead letters');
});

it('an empty --ids, or --ids with --after or --limit, is refused in one line and changes nothing', async () => {
  const dead = await deadLetter(0, 'boom');
  for (const args of [
    ['retry', '--ids', ''],
    ['purge', '--ids', ''],
    ['purge', '--ids', `${dead},`],
    ['list', '--ids', ''],
    ['list', '--ids', dead, '--after', 'x'],
    ['list', '--ids', dead, '--limit', '5'],
  ]) {
    const run = await runCli(['dlq', ...args, ...flags]);
    expect(run.code, args.join(' ')).toBe(1);
    expect(run.stdout, args.join(' ')).toBe('');
    expect(run.stderr.split('\n')[0], args.join(' ')).toMatch(/^skyq: ids: /);
  }
  expect((await queue.get(dead))?.state).toBe('dead');
});
