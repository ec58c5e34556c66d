/**
 * Graceful stop (issue 7, item 5; issue 8, item 6). Handlers are told to stop only after their
 * messages are handed back, so one that honours its signal cannot fail its message on the way
 * out; a handler that ignores the signal and keeps running is handed back counting an attempt,
 * so it cannot come back forever; and stop() ends as soon as the last handler does.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { planStart } from '../src/runtime/start-options.js';
import { startActors } from '../src/start.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

const launch = (prefix: string, extra: Record<string, unknown> = {}) =>
  startActors({
    redis: redis.server.url,
    prefix,
    groups: 1,
    handler: fixture('starts.mjs'),
    logDir: tempDir(),
    publishStats: false,
    ...extra,
  });

describe('graceful stop', () => {
  it('hands back a message whose handler honours the signal: no attempt counted, never dead', async () => {
    await redis.client.del('starts');
    const queue = new Queue({ redis: redis.server.url, prefix: 'honour', groups: 1, attempts: 1 });
    const launcher = await launch('honour');
    try {
      // A quick one finishes just before the stop, so its ack is still to send when the stop
      // comes: the old order (signal, then the ack's round trip, then the hand-back) let the
      // long one's handler fail it first.
      const [, id] = await queue.addBulk([{ body: { ms: 0 } }, { body: { ms: 60_000 } }]);
      await waitFor('both handlers started', async () =>
        (await redis.client.llen('starts')) === 2 ? true : undefined,
      );
      await launcher.stop(100);
      expect(await queue.get(id as string)).toMatchObject({
        state: 'ready',
        attempts: 0,
        deadReason: null,
      });
      expect(await queue.deadLetters.list()).toEqual([]);
      expect((await queue.counts())[0]).toMatchObject({ ready: 1, active: 0, dead: 0 });
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });

  it('returns as soon as the last handler ends, not after the whole grace', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'prompt', groups: 1 });
    const launcher = await launch('prompt');
    try {
      // Handlers that end one after another, each more than the ack delay after the last.
      await queue.addBulk([200, 400, 600, 800].map((ms) => ({ body: { ms } })));
      await waitFor('handlers running', async () =>
        ((await queue.counts())[0]?.active ?? 0) > 0 ? true : undefined,
      );
      const began = performance.now();
      await launcher.stop(20_000);
      expect(performance.now() - began).toBeLessThan(5_000);
      expect((await queue.counts())[0]).toMatchObject({ ready: 0, active: 0, dead: 0 });
    } finally {
      await queue.close();
    }
  });

  it('counts an attempt for a handler that ignores the signal, so it ends dead, not forever', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'stuck', groups: 1, attempts: 2 });
    try {
      const id = await queue.add({ forever: true });
      for (let run = 1; run <= 2; run++) {
        const launcher = await launch('stuck');
        await waitFor(`delivery ${run} running`, async () =>
          (await queue.get(id))?.state === 'active' ? true : undefined,
        );
        await launcher.stop(50);
        expect(await queue.get(id)).toMatchObject({ state: 'ready', attempts: run });
      }
      // Both attempts used: the next lease dead-letters it instead of running it a third time.
      expect(await queue.claim(0)).toEqual([]);
      expect(await queue.get(id)).toMatchObject({
        state: 'dead',
        deadReason: 'lease expired on the last of 2 attempts',
        lastError: 'still running when its consumer stopped',
      });
    } finally {
      await queue.close();
    }
  });

  it('a handler time limit is on by default (10 minutes) and 0 turns it off', () => {
    expect(planStart({}).actor.timeoutMs).toBe(600_000);
    expect(planStart({ timeoutMs: 0 }).actor.timeoutMs).toBe(0);
  });
});
