/**
 * Issue 24 §2.1–2.2: a per-name rate limit holds messages back without disorder. Held messages
 * of one name start in the order they would have started without the limit (priority, then
 * due time, then add order); `job.dueAt` and lateness count from the time the caller asked
 * for; a held message is ready (cancel, get), is never reported `started` before it starts,
 * and a launcher that does not keep the limit runs what another one held back.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { type Launcher, Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { redisNow } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

interface Start {
  id: string;
  dueAt: number;
  startedAt: number;
  lateMs: number;
  attempts: number;
  body: { n: string; i: number };
}

/** What test/fixtures/starts.mjs recorded, in start order (one group: one actor). */
async function starts(): Promise<Start[]> {
  return (await redis.client.lrange('starts', 0, -1)).map((line) => JSON.parse(line) as Start);
}

const untilStarted = (count: number, timeoutMs = 20_000) =>
  waitFor(
    `${count} starts`,
    async () => {
      const seen = await starts();
      return seen.length >= count ? seen : undefined;
    },
    timeoutMs,
  );

function launch(prefix: string, extra: Parameters<typeof startActors>[0]): Promise<Launcher> {
  return startActors({
    redis: redis.server.url,
    prefix,
    groups: 1,
    handler: fixture('starts.mjs'),
    logDir: tempDir(),
    publishStats: false,
    ...extra,
  });
}

interface Planned {
  name: string;
  priority: number;
  runAt: number;
  /** its place in the add order */
  index: number;
}

/** The order without limits, restricted to one name: priority, then due time, then add order. */
const unlimitedOrder = (planned: Planned[], name: string) =>
  planned
    .filter((p) => p.name === name)
    .sort((a, b) => a.priority - b.priority || a.runAt - b.runAt || a.index - b.index)
    .map((p) => p.index);

describe('a per-name rate limit keeps order and due times', () => {
  it('a backlog of 150 at 100/s starts in priority, due, add order; dueAt and lateness are the asked time', async () => {
    await redis.client.del('starts');
    const prefix = 'rorder';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await queue.ready();
    const now = await redisNow(redis.client);
    // Due times spread over the next second, out of add order (a past runAt is due at the
    // add); three priorities; another name beside it, unlimited.
    const planned: Planned[] = Array.from({ length: 200 }, (_, index) => ({
      name: index % 4 === 3 ? 'other' : 'mail',
      priority: (index * 7) % 3,
      runAt: now + 200 + ((index * 7919) % 200) * 5,
      index,
    }));
    await queue.addBulk(
      planned.map((p) => ({
        body: { n: p.name, i: p.index },
        options: { name: p.name, priority: p.priority, runAt: p.runAt },
      })),
    );
    // Every one is due before the launcher starts: without a limit they would start in
    // priority, due, add order.
    await waitFor('all due', async () =>
      (await redisNow(redis.client)) > now + 1300 ? true : undefined,
    );
    const launcher = await launch(prefix, { rateLimit: { mail: { max: 100, perMs: 1000 } } });
    try {
      const seen = await untilStarted(planned.length);
      for (const name of ['mail', 'other']) {
        const order = seen.filter((s) => s.body.n === name).map((s) => s.body.i);
        expect(order, `${name} in order`).toEqual(unlimitedOrder(planned, name));
      }
      for (const start of seen) {
        const asked = planned[start.body.i] as Planned;
        expect(start.dueAt, `dueAt of ${start.body.i}`).toBe(asked.runAt);
        // Late from the asked time, not from when the hold let it go (which would be near 0
        // for the last ones, started 1.3 s and more after it). The handler notes its start a
        // little after the actor measured lateMs: 500 ms on a loaded machine (a clean-clone run
        // saw 116 ms), against the seconds a wrong origin would lose.
        expect(start.lateMs).toBeGreaterThanOrEqual(start.startedAt - asked.runAt - 500);
        expect(start.attempts).toBe(1);
      }
      // 150 at 100/s: the last mail started ≥ 1.3 s after the first.
      const lastMail = seen.filter((s) => s.body.n === 'mail').at(-1) as Start;
      expect(lastMail.lateMs).toBeGreaterThan(1300);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 60_000);

  it('events: a held message gets one started event, when it starts', async () => {
    await redis.client.del('starts');
    const prefix = 'revents';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1, events: true });
    await queue.ready();
    const ids = await queue.addBulk(
      Array.from({ length: 30 }, (_, i) => ({ body: { n: 'mail', i }, options: { name: 'mail' } })),
    );
    const launcher = await launch(prefix, {
      events: true,
      rateLimit: { mail: { max: 20, perMs: 1000 } },
    });
    try {
      await untilStarted(ids.length);
      const started = new Map<string, number>();
      for await (const event of queue.events({ from: 'start', follow: false })) {
        if (event.type === 'started') started.set(event.id, (started.get(event.id) ?? 0) + 1);
      }
      expect(ids.filter((id) => started.get(id) !== 1)).toEqual([]);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 60_000);

  it('a held message is ready with its own due time, can be cancelled, and never starts', async () => {
    await redis.client.del('starts');
    const prefix = 'rcancel';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await queue.ready();
    const ids = await queue.addBulk(
      Array.from({ length: 20 }, (_, i) => ({ body: { n: 'mail', i }, options: { name: 'mail' } })),
    );
    const last = ids.at(-1) as string;
    const asked = (await queue.get(last))?.dueAt;
    expect(asked).toBeGreaterThan(0);
    const launcher = await launch(prefix, { rateLimit: { mail: { max: 2, perMs: 1000 } } });
    let free: Launcher | undefined;
    try {
      // Held: in the ready set, in its name's band (lib-held.lua), under its own due time.
      const member = `${(asked as number).toString(16).padStart(11, '0')}${last}`;
      await waitFor('the last one held back', async () =>
        Number((await redis.client.zscore(keyOf(prefix, 0, 'ready'), member)) ?? 0) >= 2 ** 21
          ? true
          : undefined,
      );
      expect(await queue.get(last)).toMatchObject({ state: 'ready', dueAt: asked });
      expect(await queue.cancel(last)).toBe(true);
      expect(await queue.get(last)).toBeNull();
      // Every other one starts (a launcher without the limit runs them at once), not it.
      await launcher.stop();
      free = await launch(prefix, {});
      await untilStarted(ids.length - 1);
      await new Promise((resolve) => setTimeout(resolve, 300)); // it would have started by now
      const seen = await starts();
      expect(seen.length).toBe(ids.length - 1);
      expect(seen.some((s) => s.id === last)).toBe(false);
    } finally {
      await launcher.stop();
      await free?.stop();
      await queue.close();
    }
  }, 60_000);

  it('a launcher without the limit runs what another held back, at once and in order', async () => {
    await redis.client.del('starts');
    const prefix = 'rhandover';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await queue.ready();
    const planned: Planned[] = Array.from({ length: 60 }, (_, index) => ({
      name: 'mail',
      priority: index % 2,
      runAt: 0,
      index,
    }));
    await queue.addBulk(
      planned.map((p) => ({
        body: { n: p.name, i: p.index },
        options: { name: p.name, priority: p.priority },
      })),
    );
    const limited = await launch(prefix, { rateLimit: { mail: { max: 2, perMs: 1000 } } });
    await untilStarted(2);
    await limited.stop();
    const before = (await starts()).length;
    expect(before).toBeLessThan(10); // the rest is held back
    const free = await launch(prefix, {});
    try {
      const seen = await untilStarted(planned.length, 5000);
      const order = seen.map((s) => s.body.i);
      expect(order).toEqual(unlimitedOrder(planned, 'mail'));
    } finally {
      await free.stop();
      await queue.close();
    }
  }, 60_000);
});
