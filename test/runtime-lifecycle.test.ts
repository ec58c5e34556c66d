/**
 * The launcher's life: start (ready only when every actor is), debug protocol, stop (no thread
 * or log file left), refusal of a bad handler module, and a crashed actor that is restarted without losing
 * its message. Real worker threads on a private redis-server.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import {
  finish,
  fixture,
  openPorts,
  recorded,
  spawnNode,
  tempDir,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('start and stop', () => {
  it('resolves when every actor is ready, answers debug calls, and stop() ends every thread', async () => {
    const portsBefore = openPorts();
    const exitListenersBefore = process.listenerCount('exit');
    const logDir = tempDir();
    const launcher = await startActors({
      redis: redis.server.url,
      logDir,
      groups: 4,
      only: [3, 1, 3],
    });
    try {
      expect(launcher.groups).toEqual([1, 3]);
      const stats = await launcher.stats();
      expect(stats.actors.map((a) => [a.group, a.status, a.stat?.state])).toEqual([
        [1, 'ok', 'running'],
        [3, 'ok', 'running'],
      ]);
      expect(stats.launcherId).toBe(launcher.id);
      expect(stats.pid).toBe(process.pid);
      expect(new Set(stats.actors.map((a) => a.stat?.threadId)).size).toBe(2);

      expect(await launcher.debug(1, 'ping', 5000)).toBe('pong');
      expect(await launcher.debug(3, 'ping', 5000)).toBe('pong');
      const stat = (await launcher.debug(3, 'stat', 5000)) as { group: number; claimed: number };
      expect(stat).toMatchObject({ group: 3, claimed: 0, done: 0, inFlight: 0, state: 'running' });
      const mem = (await launcher.debug(1, 'mem', 5000)) as { heapUsed: number; heapTotal: number };
      expect(mem.heapUsed).toBeGreaterThan(0);
      expect(mem.heapTotal).toBeGreaterThanOrEqual(mem.heapUsed);
      // A group this launcher does not run is an error, not a hang.
      await expect(launcher.debug(0, 'ping', 5000)).rejects.toThrow(/group 0/);
      expect(openPorts()).toBeGreaterThan(portsBefore);
    } finally {
      await launcher.stop();
    }
    expect(openPorts()).toBe(portsBefore);
    // Its log file is given back: a process that starts launchers again and again (a library
    // user, a benchmark) kept one fd and one exit listener per launcher.
    expect(process.listenerCount('exit')).toBe(exitListenersBefore);
    await expect(launcher.stats()).rejects.toThrow(/closed/);
    await expect(launcher.stop()).resolves.toBeUndefined(); // a second stop is harmless
    const log = readFileSync(join(logDir, 'launcher.log'), 'utf8');
    expect(log).toMatch(/"event":"started"/);
    expect(log).toMatch(/"event":"stopped"/);
    expect(readFileSync(join(logDir, 'actor-1.log'), 'utf8')).toMatch(/"event":"stopped"/);
  });

  it('a process whose launcher stopped exits by itself', async () => {
    const run = spawnNode(fixture('start-stop.mjs'), [redis.server.url, tempDir()]);
    const result = await finish(run, '', 30_000);
    const out = result.stdout + result.stderr;
    expect(out).toContain('{"status":["ok","ok"]}');
    expect(result.code).toBe(0);
  });

  it('rejects a handler module without a default export, naming the problem', async () => {
    const portsBefore = openPorts();
    const attempt = startActors({
      redis: redis.server.url,
      logDir: tempDir(),
      groups: 2,
      handler: fixture('no-default.mjs'),
    });
    await expect(attempt).rejects.toThrow(/no-default\.mjs must export a default function/);
    await waitFor('every port closed', () => (openPorts() === portsBefore ? true : undefined));
  });

  it('when one actor fails to start, the others that were still starting are stopped too', async () => {
    const portsBefore = openPorts();
    const attempt = startActors({
      redis: redis.server.url,
      prefix: 'half',
      groups: 2,
      logDir: tempDir(),
      handler: fixture('slow-or-failing.mjs'),
    });
    await expect(attempt).rejects.toThrow(/actor 1 failed to start: .*group 1 refuses to load/);
    // Group 0's actor would finish loading after the rejection: its thread must be gone, not
    // left behind to consume.
    const queue = new Queue({ redis: redis.server.url, prefix: 'half', groups: 2 });
    try {
      const id = await queue.add('nobody should take this', { group: 0 });
      await waitFor('every port closed', () => (openPorts() === portsBefore ? true : undefined));
      await waitFor('its connections closed', async () => {
        const clients = (await redis.client.client('LIST')) as string;
        return /name=skyq-wake-0/.test(clients) ? undefined : true;
      });
      expect((await queue.get(id))?.state).toBe('ready');
    } finally {
      await queue.close();
    }
  });

  it('rejects options it cannot use before starting any thread', async () => {
    await expect(startActors({ redis: redis.server.url, groups: 4, only: [4] })).rejects.toThrow(
      /only/,
    );
    const missing = {
      redis: redis.server.url,
      groups: 1,
      logDir: tempDir(),
      handler: fixture('missing.mjs'),
    };
    await expect(startActors(missing)).rejects.toThrow(
      `handler: no such file: ${fixture('missing.mjs')}`,
    );
    // A function is what a newcomer passes first; it cannot reach a worker thread.
    const inline = { ...missing, handler: (async () => undefined) as unknown as string };
    await expect(startActors(inline)).rejects.toThrow(
      /^handler: must be a module path, not a function: actors run in worker threads/,
    );
  });
});

describe('a crashing actor', () => {
  it('is restarted, and the message it held is done after its lease expires', async () => {
    const logDir = tempDir();
    const queue = new Queue({ redis: redis.server.url, prefix: 'crash', groups: 2 });
    const launcher = await startActors({
      redis: redis.server.url,
      prefix: 'crash',
      groups: 2,
      logDir,
      handler: fixture('record.mjs'),
      leaseMs: 1000,
      publishStats: false,
    });
    try {
      const id = await queue.add('crash', { group: 1 });
      const other = await queue.add('fine', { group: 0 });
      await waitFor('a restart of actor 1', () => (launcher.restarts(1) >= 1 ? true : undefined));
      const done = await waitFor('the crashed message done', async () => {
        const ids = await recorded(redis.client, 'fixture:done');
        return ids.includes(id) ? ids : undefined;
      });
      expect(done.filter((x) => x === id)).toHaveLength(1);
      expect(done).toContain(other);
      expect(launcher.restarts(0)).toBe(0);
      expect(await redis.client.get(`fixture:crashed:${id}`)).toBe('1');
      // Acked: kept in the history as done, pending no more.
      await waitFor('the ack', async () =>
        (await queue.get(id))?.state === 'done' ? true : undefined,
      );

      const stats = await launcher.stats();
      const actor1 = stats.actors.find((a) => a.group === 1);
      expect(actor1).toMatchObject({ status: 'ok', restarts: 1 });
      expect(actor1?.lastCrash).toMatch(/code 1/);
      const log = await waitFor('the crash line', () => {
        const text = readFileSync(join(logDir, 'launcher.log'), 'utf8');
        return /"event":"crash"/.test(text) ? text : undefined;
      });
      expect(log).toMatch(/"event":"crash","group":1/);
      expect(readFileSync(join(logDir, 'actor-1.log'), 'utf8')).toMatch(/"event":"restarted"/);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
