/**
 * Lease owner tokens (issue 7, item 3): only the holder of the current lease can ack, fail,
 * release or extend a message. Before, a consumer whose lease had expired could still fail the
 * message another consumer was running (it went dead, and the new owner's ack was lost).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Message, Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { untilRedisTime } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('a consumer whose lease expired', () => {
  it('cannot fail, ack, extend or release the message its new owner holds', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'tok', groups: 1, attempts: 3 });
    try {
      const id = await queue.add('order 7');
      const [stale] = (await queue.claim(0, 1, 200)) as [Message];
      await untilRedisTime(redis.client, Date.now() + 250);
      const [owner] = (await queue.claim(0, 1, 30_000)) as [Message];
      expect(owner).toMatchObject({ id, attempts: 2 });
      expect(owner.token).not.toBe(stale.token);

      expect(await queue.fail(stale, new Error('late'))).toBe('stale');
      expect(await queue.extendLease([stale], 60_000)).toBe(0);
      expect(await queue.release([stale])).toBe(0);
      expect(await queue.ack([stale])).toBe(0);
      const polled = await queue.poll(0, { ack: [stale] });
      expect(polled).toMatchObject({ acked: 0, stale: [id] });
      expect(await queue.get(id)).toMatchObject({ state: 'active', attempts: 2, deadReason: null });

      // The owner's calls all work.
      expect(await queue.extendLease([owner], 60_000)).toBe(1);
      expect(await queue.ack([owner])).toBe(1);
      expect((await queue.get(id))?.state ?? 'done').toBe('done'); // done (kept) or gone
      expect(await queue.deadLetters.list()).toEqual([]);
    } finally {
      await queue.close();
    }
  });

  it('in the runtime: the late ack is refused and logged, the new owner acks, nothing dies', async () => {
    await redis.client.del('starts');
    const where = { redis: redis.server.url, prefix: 'tokrt', groups: 1, attempts: 3 };
    const queue = new Queue(where);
    const options = {
      ...where,
      handler: fixture('starts.mjs'),
      leaseMs: 300,
      publishStats: false,
      hangTimeoutMs: 0,
    };
    const dirs = [tempDir(), tempDir()];
    const [first, second] = await Promise.all(
      dirs.map((logDir) => startActors({ ...options, logDir })),
    );
    try {
      // The first delivery blocks its thread past the lease: no renewal, the other launcher's
      // actor takes the message over, and the first one's ack comes too late.
      const id = await queue.add({ block: 1500 });
      await waitFor('two starts', async () =>
        (await redis.client.llen('starts')) >= 2 ? true : undefined,
      );
      await waitFor('acked by the new owner', async () =>
        ((await queue.get(id))?.state ?? 'done') === 'done' ? true : undefined,
      );
      const staleNow = async () => {
        const all = await Promise.all([first, second].map((l) => l?.stats()));
        return all.reduce((sum, s) => sum + (s?.totals.stale ?? 0), 0);
      };
      // Every delivery but the one that finished was taken over, and its ack refused: the first
      // (blocked past its lease), and on a machine loaded enough to starve the new owner past its
      // 300 ms lease as well, that one too (a third start). No other ack is refused.
      const startsNow = async () => redis.client.llen('starts');
      await waitFor('the refused acks', async () =>
        (await staleNow()) >= (await startsNow()) - 1 ? true : undefined,
      );
      expect(await startsNow()).toBeGreaterThanOrEqual(2);
      expect(await staleNow()).toBe((await startsNow()) - 1);
      expect(await queue.deadLetters.list()).toEqual([]);
    } finally {
      await Promise.all([first, second].map((l) => l?.stop()));
      await queue.close();
    }
    const logs = dirs.map((dir) => readFileSync(join(dir, 'actor-0.log'), 'utf8')).join('\n');
    expect(logs).toMatch(/"event":"stale"/);
  });
});

describe('an actor that went idle', () => {
  // Housekeeping (lease renewals, handler time limits) runs only while an actor holds
  // messages (actor-rounds.ts): it must start again with the next claim after a quiet spell.
  it('renews the leases and times out the handlers of what it claims next', async () => {
    await redis.client.del('starts');
    const where = { redis: redis.server.url, prefix: 'idlerenew', groups: 1, attempts: 3 };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      handler: fixture('starts.mjs'),
      leaseMs: 300,
      timeoutMs: 2000,
      graceMs: 200,
      publishStats: false,
      logDir: tempDir(),
    });
    try {
      const first = await queue.add({ ms: 50 });
      await waitFor('the first done', async () =>
        ((await queue.get(first))?.state ?? 'done') === 'done' ? true : undefined,
      );
      await untilRedisTime(redis.client, Date.now() + 1000); // quiet: housekeeping stopped
      // Runs five leases long: without renewals it would be claimed (and started) again.
      const long = await queue.add({ ms: 1500 });
      await waitFor('the long one done', async () =>
        ((await queue.get(long))?.state ?? 'done') === 'done' ? true : undefined,
      );
      // Past its time limit: failed by the actor, not left running. (Its failure in Redis, not
      // the launcher's count: that counts the decision, before the fail call lands, and a read
      // in between found no error yet, once in CI.)
      const stuck = await queue.add({ forever: true });
      await waitFor('the stuck one failed', async () =>
        (await queue.get(stuck))?.lastError && (await launcher.stats()).totals.failed >= 1
          ? true
          : undefined,
      );
      const starts = (await redis.client.lrange('starts', 0, -1)).map((s) => JSON.parse(s));
      expect(starts.filter((s) => s.id === long)).toHaveLength(1);
      expect((await launcher.stats()).totals.stale).toBe(0);
      expect(await queue.get(stuck)).toMatchObject({
        lastError: expect.stringMatching(/timed out/),
      });
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
