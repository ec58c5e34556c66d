/**
 * A handler's last error keeps its stack (issue 27, 2.2): a handler that throws, in the actor
 * and on the pool, leaves its stack (naming the handler's file) in the job's record, in get(),
 * `skyq get`, the actor's log line and `skyq logs`; at most 8 KiB of it, cut at a character's
 * edge; a dead-letter page carries the message only; an error stored by format 7 (a message
 * alone) reads as before, with no stack. Real redis-server and launchers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { formatLogLine } from '../src/cli/log-format.js';
import { type Launcher, Queue, startActors } from '../src/index.js';
import { STACK_MAX_BYTES } from '../src/queue/error-stack.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, runCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('the stack of a handler’s last error', () => {
  const launchers: Launcher[] = [];
  const queues: Queue[] = [];

  /** A launcher of the throwing fixture (on a pool of one thread with `pool`), and its queue. */
  async function start(pool = 0) {
    const prefix = freshPrefix('stack');
    const logDir = tempDir('skyq-stack-');
    const options = { redis: redis.server.url, prefix, groups: 1, attempts: 1 };
    launchers.push(await startActors({ ...options, logDir, handler: fixture('throws.mjs'), pool }));
    const queue = new Queue(options);
    queues.push(queue);
    return { queue, prefix, logDir };
  }

  const dead = (queue: Queue, id: string) =>
    waitFor(`${id} to die`, async () => {
      const info = await queue.get(id);
      return info?.state === 'dead' ? info : undefined;
    });

  afterAll(async () => {
    await Promise.all(queues.map((q) => q.close()));
    await Promise.all(launchers.map((l) => l.stop(0)));
  });

  it('is kept with the job and shown by get(), skyq get, the log and skyq logs', async () => {
    const { queue, prefix, logDir } = await start();
    const id = await queue.add({ order: 42 });
    const info = await dead(queue, id);
    expect(info.lastError).toBe('no such order 42');
    expect(info.lastErrorStack).toMatch(
      /^TypeError: no such order 42\n\s+at .*handle.* \(.*throws\.mjs:\d+:\d+\)/,
    );

    const flags = ['--redis', redis.server.url, '--prefix', prefix, '--groups', '1'];
    const cli = await runCli(['get', id, ...flags]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^last error\s+no such order 42$/m);
    // The stack's first line on the row, its frames under it in the value column.
    const row =
      /^(error stack\s+)TypeError: no such order 42\n(\s+)at .*handle.* \(.*throws\.mjs/m.exec(
        cli.stdout,
      );
    expect(row, cli.stdout).not.toBeNull();
    expect(row?.[2]?.length).toBe(row?.[1]?.length);

    const lines = await waitFor('the failure logged', () => {
      const text = readFileSync(join(logDir, 'actor-0.log'), 'utf8');
      const found = text.split('\n').filter((line) => line.includes('"handler failed"'));
      return found.length > 0 ? found : undefined;
    });
    const logged = JSON.parse(lines[0] as string) as { job: string; err: string; stack: string };
    expect(logged).toMatchObject({ job: id, err: 'no such order 42' });
    expect(logged.stack).toBe(info.lastErrorStack);
    const shown = formatLogLine(lines[0] as string, { minLevel: 0 })?.split('\n') ?? [];
    expect(shown[0]).toContain(`job=${id}`);
    expect(shown[0]).not.toContain('stack=');
    expect(shown[1]).toBe('    TypeError: no such order 42');
    expect(shown[2]).toMatch(/^ {4}at .*handle.* \(.*throws\.mjs:\d+:\d+\)$/);

    // A dead-letter page names the error, without its stack.
    const [letter] = (await queue.deadLetters.page({ limit: 1 })).letters;
    expect(letter?.lastError).toBe('no such order 42');
  });

  it('crosses from the pool thread, and is cut to 8 KiB at a character’s edge', async () => {
    const { queue } = await start(1);
    const id = await queue.add({ order: 7 });
    const info = await dead(queue, id);
    expect(info.lastErrorStack).toMatch(
      /^TypeError: no such order 7\n\s+at .*handle.* \(.*throws\.mjs/,
    );
    const huge = await dead(queue, await queue.add({ huge: true }));
    const stack = huge.lastErrorStack as string;
    expect(Buffer.byteLength(stack)).toBeLessThanOrEqual(STACK_MAX_BYTES);
    expect(Buffer.byteLength(stack)).toBeGreaterThan(STACK_MAX_BYTES - 2);
    expect(stack.startsWith('Error: huge\néé')).toBe(true);
    expect(stack.endsWith('é')).toBe(true);
    expect(huge.lastError).toBe('huge');
  });

  it('reads an error format 7 stored (a message alone) with no stack', async () => {
    const { queue, prefix } = await start();
    const id = await queue.add({ order: 1 });
    await dead(queue, id);
    await redis.client.hset(keyOf(prefix, 0, 'err'), id, 'written by format 7');
    const info = await queue.get(id);
    expect(info).toMatchObject({ lastError: 'written by format 7', lastErrorStack: null });
    const [letter] = (await queue.deadLetters.page({ limit: 1 })).letters;
    expect(letter?.lastError).toBe('written by format 7');
  });
});
