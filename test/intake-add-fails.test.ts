/**
 * An intake step is move, add, then trim (src/queue/intake/transfer.ts): an item leaves the
 * holding list only after its add went through. Here the add fails (the group's delayed set
 * is a key of the wrong type) while items wait: they stay held, the error shows, and once the
 * group is fixed each is added exactly once. A trim before the add (issue 24 §3's mutation,
 * seen before only by test/faults/intake-kill) loses them here in a few seconds.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { itemId, ownHolding } from '../src/queue/intake/holding.js';
import { startActors } from '../src/start.js';
import { itemsOf } from './helpers/intake.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('an intake whose add fails', () => {
  it('keeps the items held until the add goes through, then adds each once', async () => {
    const prefix = 'ifail';
    const list = 'ifail:in';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await queue.ready();
    const broken = keyOf(prefix, 1, 'delayed');
    await redis.client.set(broken, 'not a sorted set'); // every add to group 1 fails
    const items = itemsOf('in', 5);
    await redis.client.lpush(list, ...items);
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      only: [0], // nobody claims group 1: what the intake added stays to be counted
      intake: [{ list, group: 1 }],
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const spec = launcher.intake[0] as (typeof launcher.intake)[number];
      const holding = ownHolding(prefix, launcher.id, spec);
      await waitFor('the failed add shown', async () =>
        /WRONGTYPE/.test((await launcher.stats()).intake?.[0]?.error ?? '') ? true : undefined,
      );
      // Moved out of the list as the steps go on (each fails and is tried again): held, every
      // one, none lost to a trim.
      await waitFor('all five moved', async () =>
        (await redis.client.llen(list)) === 0 ? true : undefined,
      );
      expect(await redis.client.lrange(holding.key, 0, -1)).toEqual([...items].reverse());
      await redis.client.del(broken);
      await waitFor('all five added', async () =>
        (await redis.client.llen(holding.key)) === 0 ? true : undefined,
      );
      const counts = (await queue.counts())[1];
      expect((counts?.ready ?? 0) + (counts?.delayed ?? 0)).toBe(5);
      for (const [i, body] of items.entries()) {
        const info = await queue.get(itemId(holding, i), { group: 1 });
        expect(info?.body).toBe(body);
      }
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 30_000);
});
