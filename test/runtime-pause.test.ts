import { expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, tempDir, untilClaimed, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

it('holds messages while paused and consumes them after resume()', async () => {
  const where = { redis: redis.server.url, prefix: 'paused', groups: 2 };
  const queue = new Queue(where);
  const options = { handler: fixture('record.mjs'), publishStats: false };
  const launcher = await startActors({ ...where, ...options, logDir: tempDir(), paused: true });
  // The same launcher, not paused, on a queue of its own: once it handled what it was given
  // after the paused one got its messages, the paused one would have handled them too.
  const control = { redis: redis.server.url, prefix: 'unpaused', groups: 2 };
  const controlQueue = new Queue(control);
  const controlLauncher = await startActors({ ...control, ...options, logDir: tempDir() });
  try {
    await queue.addBulk(Array.from({ length: 20 }, () => ({ body: { list: 'paused' } })));
    await controlQueue.addBulk(Array.from({ length: 20 }, () => ({ body: { list: 'unpaused' } })));
    await waitFor('the launcher not paused handled its 20', async () =>
      (await redis.client.llen('unpaused')) === 20 ? true : undefined,
    );
    expect(await redis.client.llen('paused')).toBe(0);
    expect((await queue.counts()).reduce((sum, c) => sum + c.ready, 0)).toBe(20);
    await launcher.resume();
    await waitFor('all consumed', async () =>
      (await redis.client.llen('paused')) === 20 ? true : undefined,
    );
  } finally {
    await Promise.all([launcher.stop(), controlLauncher.stop()]);
    await Promise.all([queue.close(), controlQueue.close()]);
  }
});

it('queue.pause() holds a group for every launcher until queue.resume()', async () => {
  const where = { redis: redis.server.url, prefix: 'gpause', groups: 2 };
  const queue = new Queue(where);
  const options = { ...where, handler: fixture('record.mjs'), publishStats: false };
  const launchers = await Promise.all([
    startActors({ ...options, logDir: tempDir() }),
    startActors({ ...options, logDir: tempDir() }),
  ]);
  try {
    expect(await queue.pause(1)).toEqual([1]);
    expect(await queue.pause(1)).toEqual([]); // already paused
    const held = await queue.addBulk(
      Array.from({ length: 10 }, () => ({ body: { list: 'gpause' }, options: { group: 1 } })),
    );
    const free = await queue.add({ list: 'gpause' }, { group: 0 });
    await waitFor('the other group consumed', async () =>
      (await redis.client.lrange('gpause', 0, -1)).includes(free) ? true : undefined,
    );
    // pause() woke a consumer of group 1: it found the group paused and says so.
    await waitFor('an actor of group 1 in state paused', async () => {
      const states = await Promise.all(launchers.map((l) => l.stats()));
      const paused = states.some(
        (s) => s.actors.find((a) => a.group === 1)?.stat?.state === 'paused',
      );
      return paused ? true : undefined;
    });
    // Adds to a paused group wake nobody: a claim of group 1 after the held adds, so the
    // check below sees what a claim does with them.
    await untilClaimed(redis.client, 'gpause', 1);
    // Whatever that claim leased would start at once; a message added after it, in the group
    // not paused, is handled by then.
    const later = await queue.add({ list: 'gpause' }, { group: 0 });
    await waitFor('a later message of the other group consumed', async () =>
      (await redis.client.lrange('gpause', 0, -1)).includes(later) ? true : undefined,
    );
    expect(await redis.client.llen('gpause')).toBe(2);
    expect((await queue.counts())[1]).toMatchObject({ ready: 10, paused: true });

    expect(await queue.resume()).toEqual([1]); // all groups: only group 1 was paused
    await waitFor('the held ones consumed', async () =>
      (await redis.client.llen('gpause')) === 12 ? true : undefined,
    );
    expect((await redis.client.lrange('gpause', 0, -1)).sort()).toEqual(
      [...held, free, later].sort(),
    );
    await waitFor('the acks', async () =>
      (await queue.counts())[1]?.active === 0 ? true : undefined,
    );
    expect((await queue.counts())[1]).toMatchObject({ ready: 0, active: 0, paused: false });
  } finally {
    await Promise.all(launchers.map((l) => l.stop()));
    await queue.close();
  }
});

it('adds to a paused group wake no actor (only resume does)', async () => {
  // Before, every add woke a paused group's actor for a claim that leased nothing.
  const where = { redis: redis.server.url, prefix: 'pwake', groups: 1 };
  const queue = new Queue(where);
  const launcher = await startActors({
    ...where,
    handler: fixture('record.mjs'),
    publishStats: false,
    logDir: tempDir(),
    watchMs: 0,
    keyspaceEvents: 'off',
  });
  const scriptCalls = async () => {
    const info = await redis.client.info('commandstats');
    const calls = (name: string) =>
      Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return calls('evalsha') + calls('eval');
  };
  try {
    await queue.pause(0);
    // pause() wakes the actor: it claims, finds the group paused, and says so.
    await waitFor('the actor in state paused', async () =>
      (await launcher.stats()).actors[0]?.stat?.state === 'paused' ? true : undefined,
    );
    const before = await scriptCalls();
    for (let i = 0; i < 30; i++) {
      await queue.add({ list: 'pwake' }, { group: 0 });
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const claims = (await scriptCalls()) - before - 30; // less the adds themselves
    // Before, each add woke it: about 30. What is left are the actor's own timed calls (its
    // paused re-check, the flow sweep), more of them when a loaded machine stretches the
    // window (a clean-clone run counted 3).
    expect(claims).toBeLessThanOrEqual(6);
    await queue.resume(0);
    await waitFor('all consumed after resume', async () =>
      (await redis.client.llen('pwake')) === 30 ? true : undefined,
    );
  } finally {
    await launcher.stop();
    await queue.close();
  }
});
