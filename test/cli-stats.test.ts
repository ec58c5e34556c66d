/**
 * `skyq stats` as an operator sees it: a group whose key has the wrong type is shown as broken
 * while the others are counted, paused groups are marked, and --watch refreshes in place in a
 * terminal (a real pseudo-terminal from `script`) or prints one table per interval in a pipe;
 * Ctrl-C ends it cleanly either way. Connections lost right after it found Redis reachable are
 * an outage it waits out, not a wrong address it exits on.
 */
import { spawn } from 'node:child_process';
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import {
  CLI,
  ROOT,
  runCli,
  spawnCli,
  tempDir,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ESC = '\u001b';

describe('skyq stats', () => {
  it('shows a group it cannot read as broken, the others as usual, and paused ones as paused', async () => {
    const flags = ['--redis', redis.server.url, '--prefix', 'brk', '--groups', '3'];
    const queue = new Queue({ redis: redis.server.url, prefix: 'brk', groups: 3 });
    try {
      await queue.add('zero', { group: 0 });
      await queue.add('two', { group: 2, delay: 60_000 });
      await queue.pause(2);
      await redis.client.set('brk:1', 'foo'); // the delayed set of group 1, as a string
      const run = await runCli(['stats', ...flags]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^brk:0 +0 +1 +0 +0 +ok$/m);
      expect(run.stdout).toMatch(
        /^brk:1 +- +- +- +- +broken: WRONGTYPE Operation against a key holding the wrong kind of value$/m,
      );
      expect(run.stdout).toMatch(/^brk:2 +1 +0 +0 +0 +paused$/m);
      expect(run.stdout).toContain('1 group(s) cannot be read');
      const json = JSON.parse((await runCli(['stats', ...flags, '--json'])).stdout);
      expect(json.groups[1]).toMatchObject({ group: 1, error: expect.stringMatching(/WRONGTYPE/) });
      expect(json.groups[2]).toMatchObject({ group: 2, delayed: 1, paused: true });
    } finally {
      await queue.close();
    }
  });

  it("shows each actor's throughput (done/s), and – for the lateness of an actor that ran nothing", async () => {
    const where = { redis: redis.server.url, prefix: 'thru', groups: 2 };
    const flags = ['--redis', redis.server.url, '--prefix', 'thru', '--groups', '2'];
    const queue = new Queue(where);
    const launcher = await startActors({ ...where, logDir: tempDir() });
    let stop = false;
    // A steady trickle into group 0 (about 200/s) while stats is read; group 1 gets nothing.
    const feed = (async () => {
      while (!stop) {
        await queue.addBulk(
          Array.from({ length: 20 }, () => ({ body: 'x', options: { group: 0 } })),
        );
        await sleep(100);
      }
    })();
    try {
      const row = (text: string, group: number) =>
        new RegExp(`^actor ${group} .*$`, 'm').exec(text)?.[0] ?? '';
      const run = await waitFor('actor 0 to show a rate', async () => {
        const out = await runCli(['stats', ...flags]);
        return /^actor 0 +running +\d+ +\d+ +[1-9][\d.]* /m.test(out.stdout) ? out : undefined;
      });
      expect(run.stdout).toMatch(/^actor +state +claimed +done +done\/s +failed /m);
      // Actor 1 ran nothing: its rate is 0 and it has no lateness to show.
      expect(row(run.stdout, 1)).toMatch(/^actor 1 +running +0 +0 +0 +0 +0 +0 +0 +0 +– +0/);
      // Every figure with the same precision: whole µs, or one decimal of a larger unit.
      const figure = '(\\d+ µs|\\d+\\.\\d (ms|s|min|h))';
      expect(row(run.stdout, 0)).toMatch(new RegExp(`${figure} / ${figure} / ${figure}`));
    } finally {
      stop = true;
      await feed;
      await launcher.stop();
      await queue.close();
    }
  });

  it('--watch in a pipe prints one table per interval and ends on SIGINT', async () => {
    const watcher = spawnCli(['stats', '--redis', redis.server.url, '--watch', '300ms']);
    await waitFor('three tables', () =>
      (watcher.stdout().match(/^--- skyq stats every 300ms at /gm) ?? []).length >= 3
        ? true
        : undefined,
    );
    watcher.child.kill('SIGINT');
    const result = await watcher.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toContain(ESC); // no cursor codes in a file or a pipe
    expect(result.stdout).toMatch(/task_group:9 +\d+/);
  });

  it('--watch in a terminal redraws from the top-left corner and ends on Ctrl-C', async () => {
    // `script` runs the command on a pseudo-terminal of 12 rows; a Ctrl-C byte written to
    // it reaches the command as SIGINT, as a keyboard's would.
    const command = `stty rows 12 cols 100; exec ${process.execPath} ${CLI} stats --redis ${redis.server.url} --watch 200ms`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    const done = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      await waitFor('three frames', () => (out.split(`${ESC}[H`).length > 3 ? true : undefined));
      child.stdin.write('\u0003');
      const code = await Promise.race([done, sleep(10_000).then(() => 'hung')]);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    expect(out.startsWith(`${ESC}[?25l${ESC}[2J`)).toBe(true); // hide the cursor, clear once
    expect(out.split(`${ESC}[2J`)).toHaveLength(2);
    expect(out.trimEnd().endsWith(`${ESC}[?25h`)).toBe(true); // the cursor is back
    const frames = out.split(`${ESC}[H`).slice(1, -1);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    for (const frame of frames) {
      expect(frame).toMatch(/^skyq stats every 200ms at /);
      expect(frame.endsWith(`${ESC}[J`)).toBe(true); // clears what the last frame left below
      // Never more lines than the screen has: nothing scrolls.
      expect(frame.split('\n').length).toBeLessThanOrEqual(11);
    }
  });

  it('--watch and events --follow wait out connections lost before they began (Redis had answered)', async () => {
    // The first connection of each command (its reachability check) goes through; every other
    // one made in the next 6 s is closed at once, as Redis dropping clients right after
    // answering would: longer than a command may wait (5 s), so their first reads fail.
    // Before, that first failure ended both commands (exit 1) as if the address were wrong.
    const [stats, events] = [await droppingProxy(), await droppingProxy()];
    const watcher = spawnCli(['stats', '--redis', stats.url, '--watch', '200ms', '--json']);
    const follower = spawnCli([
      'events',
      '--redis',
      events.url,
      '--prefix',
      'lost',
      '--follow',
      '--json',
    ]);
    const queue = new Queue({ redis: redis.server.url, prefix: 'lost' });
    try {
      await waitFor(
        'a frame once connections go through',
        () => (watcher.stdout().includes('"groups"') ? true : undefined),
        20_000,
      );
      expect(watcher.stderr()).toMatch(/^skyq: cannot read the figures: /m);
      await waitFor('events --follow waiting', () =>
        /^skyq: waiting for Redis: /m.test(follower.stderr()) ? true : undefined,
      );
      // A cancel is an event even without start --events; one every 500 ms until the follower
      // (from now, once it could read) prints one.
      await waitFor(
        'events --follow printing an event',
        async () => {
          await queue.cancel(await queue.add('later', { delay: 3_600_000 }));
          return follower.stdout().includes('"type":"cancelled"') ? true : undefined;
        },
        20_000,
        500,
      );
      for (const child of [watcher, follower])
        expect(child.child.exitCode, child.stderr()).toBe(null);
    } finally {
      await queue.close();
      for (const child of [watcher, follower]) child.child.kill('SIGKILL');
      stats.close();
      events.close();
    }
  });
});

/**
 * A TCP hop to the test's Redis that lets its first connection through (a command's
 * reachability check) and closes every other one made in the 6 s after it.
 */
async function droppingProxy(): Promise<{ url: string; close: () => void }> {
  const port = Number(new URL(redis.server.url).port);
  const sockets = new Set<Socket>();
  let firstAt = 0;
  const proxy = createServer((client) => {
    sockets.add(client);
    if (firstAt !== 0 && Date.now() - firstAt < 6000) {
      client.destroy();
      return;
    }
    firstAt ||= Date.now();
    const upstream = tcpConnect(port, '127.0.0.1');
    sockets.add(upstream);
    client.pipe(upstream).pipe(client);
    for (const end of [client, upstream]) end.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(proxy.address() as { port: number }).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    },
  };
}
