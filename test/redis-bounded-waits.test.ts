/**
 * A library Queue (not failFast) on a Redis that does not answer fails within `unreachableMs`
 * (5 s by default) and recovers by itself once the server is back; startActors fails before it
 * starts any thread; and no error skyq hands out carries a password anywhere inside it (the
 * message, its cause, ioredis's `command.args` of the AUTH, the stack), as Node would print
 * it. Before: add() rejected after 10.6 s, startActors after 32.8 s, and the cause of a
 * refused login held `args: [ 'someone', '<password>' ]`.
 */
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Queue, SkyqError, startActors } from '../src/index.js';
import { heldPort, startStandalone } from './helpers/redis.js';
import { removeTempDirs, tempDir } from './helpers/runtime.js';

afterAll(removeTempDirs);

const PASSWORD = 'pw-4e059a53-never-shown';

/** Everything Node would print of an error, causes and their fields included. */
const printed = (error: unknown) => inspect(error, { depth: 10 });

async function rejection(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await call.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  return { error, ms: Date.now() - started };
}

describe('a Queue on a Redis that does not answer', () => {
  it('fails add() within unreachableMs with ERR_SKYQ_UNREACHABLE, default 5 s', async () => {
    const port = await heldPort(); // nothing listens there
    const queue = new Queue({ redis: `redis://127.0.0.1:${port}` });
    const { error, ms } = await rejection(queue.add('x'));
    const quick = new Queue({ redis: `redis://127.0.0.1:${port}`, unreachableMs: 800 });
    const fast = await rejection(quick.add('x'));
    await Promise.all([queue.close(), quick.close()]);
    expect(error).toBeInstanceOf(SkyqError);
    expect(error).toMatchObject({ code: 'ERR_SKYQ_UNREACHABLE' });
    expect((error as Error).message).toBe(
      `cannot reach Redis at redis://127.0.0.1:${port}: connection refused`,
    );
    expect(ms).toBeGreaterThanOrEqual(4500);
    expect(ms).toBeLessThan(7000);
    expect(fast.error).toMatchObject({ code: 'ERR_SKYQ_UNREACHABLE' });
    expect(fast.ms).toBeLessThan(2500);
  });

  it('refuses at once while the server is away, and works again once it is back', async () => {
    const port = await heldPort();
    let server = await startStandalone({ port });
    const queue = new Queue({ redis: server.url, unreachableMs: 500 });
    try {
      await queue.add('before');
      await server.stop();
      const first = await rejection(queue.add('while away'));
      expect(first.error).toMatchObject({ code: 'ERR_SKYQ_UNREACHABLE' });
      const next = await rejection(queue.add('still away'));
      expect(next.error).toMatchObject({ code: 'ERR_SKYQ_UNREACHABLE' });
      expect(next.ms).toBeLessThan(400); // no second wait: it is known to be away
      server = await startStandalone({ port });
      const started = Date.now();
      let id: string | undefined;
      while (id === undefined && Date.now() - started < 10_000) {
        id = await queue.add('after').catch(() => undefined);
        if (id === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(id).toBeDefined();
      expect(Date.now() - started).toBeLessThan(3000);
      // The refused adds never went in: only the one added after the return is there.
      expect((await queue.counts()).reduce((n, c) => n + c.delayed + c.ready, 0)).toBe(1);
    } finally {
      await queue.close();
      await server.stop();
    }
  });

  it('startActors fails before any thread starts, in the CLI time', async () => {
    const port = await heldPort();
    const { error, ms } = await rejection(
      startActors({ redis: `redis://127.0.0.1:${port}`, groups: 10, logDir: tempDir() }),
    );
    expect(error).toMatchObject({ code: 'ERR_SKYQ_UNREACHABLE' });
    expect(ms).toBeLessThan(5000);
  });
});

describe('no password inside an error', () => {
  it('a refused login: not in the message, the cause, command.args or the stack', async () => {
    const server = await startStandalone({ dir: tempDir(), password: 'the-right-one' });
    const port = new URL(server.url).port;
    const urls = [
      `redis://someone:${PASSWORD}@127.0.0.1:${port}`,
      `redis://:${PASSWORD}@127.0.0.1:${port}`,
    ];
    try {
      for (const redis of urls) {
        const queue = new Queue({ redis });
        const calls = {
          add: () => queue.add('x'),
          get: () => queue.get('x'),
          ready: () => queue.ready(),
        };
        for (const [name, call] of Object.entries(calls)) {
          const { error } = await rejection(call());
          expect(error, name).toMatchObject({ code: 'ERR_SKYQ_AUTH' });
          expect(printed(error)).not.toContain(PASSWORD);
          expect(printed(error)).toContain('***');
        }
        await queue.close();
        const start = await rejection(startActors({ redis, groups: 2, logDir: tempDir() }));
        expect(start.error).toBeInstanceOf(Error);
        expect(printed(start.error)).not.toContain(PASSWORD);
      }
    } finally {
      await server.stop();
    }
  });
});
