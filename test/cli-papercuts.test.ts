/**
 * Small things a new user of the CLI trips on (issue 27 §5), each as the user meets it: `get`
 * shows a job's name once; flags that only work together say so; a count of 0 names its real
 * range; `reschedule --at` says which zone it read and answers in it; `--redis`'s help names
 * the embedded port in force; `dashboard` says which Redis it reads and what to do about a
 * taken port.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { finish, removeTempDirs, runCli, spawnCli, waitFor } from './helpers/runtime.js';

let server: RedisServerHandle;
let queue: Queue;
const where = () => ['--redis', server.url, '--prefix', 'cuts', '--groups', '2'];
const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

beforeAll(async () => {
  server = await startStandalone();
  queue = new Queue({ redis: server.url, prefix: 'cuts', groups: 2 });
});

afterAll(async () => {
  await queue?.close();
  await server?.stop();
  removeTempDirs();
});

it('get prints the name row once', async () => {
  const id = await queue.add('x', { name: 'email.send', delay: 60_000 });
  const run = await runCli(['get', id, ...where()]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout.match(/^name\s+email\.send$/gm)).toHaveLength(1);
});

it('produce refuses --spread and --body-bytes without --count, in one line', async () => {
  const before = (await queue.listCounts()).delayed;
  for (const flag of [
    ['--spread', '5s'],
    ['--body-bytes', '10'],
  ]) {
    const run = await runCli(['produce', ...where(), ...flag], 'not added\nquit\n');
    expect([flag, run.code, run.stdout]).toEqual([flag, 1, '']);
    expect(lines(run.stderr)[0]).toBe(
      `skyq: ${flag[0]?.slice(2)}: only goes with --count (it shapes the generated messages; lines from stdin take --delay)`,
    );
  }
  expect((await queue.listCounts()).delayed).toBe(before);
});

it('a count that must be at least 1 says so, not a range up to 2^53', async () => {
  const run = await runCli([
    'schedules',
    'upsert',
    's',
    '--every',
    '1h',
    '--limit',
    '0',
    ...where(),
  ]);
  expect(run.code).toBe(1);
  expect(lines(run.stderr)[0]).toBe('skyq: limit: must be at least 1 (got 0)');
  expect(run.stderr).not.toContain('9007199254740991');
  // The library says the same.
  await expect(queue.schedules.upsert('s', { every: '1h', limit: 0 })).rejects.toThrow(
    'limit: must be at least 1 (got 0)',
  );
});

it('reschedule --at without a zone says it read local time, and answers in that zone', async () => {
  const id = await queue.add('x', { delay: 60_000 });
  const tokyo = await finish(
    spawnCli(['reschedule', id, '--at', '2027-01-01T09:00', ...where()], { TZ: 'Asia/Tokyo' }),
  );
  expect(tokyo.code, tokyo.stderr).toBe(0);
  expect((await queue.get(id))?.dueAt).toBe(Date.parse('2027-01-01T00:00:00Z'));
  expect(lines(tokyo.stdout)[1]).toMatch(
    new RegExp(
      `^rescheduled ${id}: due 2027-01-01 09:00:00\\.000 local time \\(Asia/Tokyo, UTC\\+09:00; 2027-01-01T00:00:00\\.000Z\\), in \\S+ days$`,
    ),
  );
  // With a zone it was told, it answers in UTC as before.
  const utc = await finish(
    spawnCli(['reschedule', id, '--at', '2027-01-01T09:00Z', ...where()], { TZ: 'Asia/Tokyo' }),
  );
  expect(lines(utc.stdout)[1]).toMatch(
    new RegExp(`^rescheduled ${id}: due 2027-01-01T09:00:00\\.000Z \\(in \\S+ days\\)$`),
  );
});

it("--redis's help names the embedded port in force", async () => {
  const run = await finish(spawnCli(['stats', '--help'], { SKYQ_EMBEDDED_PORT: '6390' }));
  expect(run.code).toBe(0);
  expect(run.stdout.replace(/\s+/g, ' ')).toContain('redis://127.0.0.1:6390');
  expect(run.stdout).not.toContain('6379');
});

it('dashboard says which Redis it reads, and what to do when its port is taken', async () => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    const run = await runCli(['dashboard', ...where(), '--http', `127.0.0.1:${port}`]);
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      `skyq: http: cannot listen on 127.0.0.1:${port}: the port is in use (another dashboard or program listens there); pick another, e.g. --http 127.0.0.1:${port + 1}, or --http 127.0.0.1:0 for any free one`,
    ]);
  } finally {
    taken.close();
  }
  const dashboard = spawnCli(['dashboard', ...where(), '--http', '127.0.0.1:0']);
  try {
    await waitFor('the dashboard to listen', () =>
      /dashboard, \/metrics/.test(dashboard.stdout()) ? true : undefined,
    );
    expect(lines(dashboard.stdout())[0]).toBe(`reading redis://127.0.0.1:${server.port}`);
  } finally {
    dashboard.child.kill('SIGINT');
    await finish(dashboard);
  }
});
