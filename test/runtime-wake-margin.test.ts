// An actor wakes before a due time by as long as its claims take. It woke 3 ms before, always:
// wherever a claim takes longer (a Redis a few ms away, the first claims of a fresh launcher
// whose code is not compiled yet) each message started late by the rest of the round trip.
// Here Redis answers 60 ms late. The actor's clock is a lower bound from the replies, so a
// start can come no sooner than 60 ms after its due time (never early wins); a fixed 3 ms
// made it ~120 ms (the round trip again), the margin makes it ~60.
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { startDelayProxy } from './helpers/delay-proxy.js';
import { readStarts } from './helpers/intake.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const REPLY_DELAY_MS = 60;

describe('an actor whose claims take long', () => {
  it('wakes that much earlier: a trickle starts a reply delay late, not a round trip', async () => {
    const proxy = await startDelayProxy(redis.server.port, REPLY_DELAY_MS);
    const prefix = freshPrefix('margin');
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await redis.client.del('starts');
    const launcher = await startActors({
      redis: proxy.url,
      prefix,
      groups: 1,
      logDir: tempDir(),
      handler: fixture('starts.mjs'),
      // Not niced: beside busy processes (CI runs three files at once) a nice-10 actor's starts
      // wait for the core, and these bounds are on lateness (test/intake's idle-list test).
      actorNice: 0,
    });
    try {
      // One at a time, each due 500 ms after it is added: the actor is idle before each.
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const [id] = await queue.addBulk([{ body: { i }, options: { group: 0, delay: 500 } }]);
        ids.push(id as string);
        await waitFor(`start ${i}`, async () =>
          (await redis.client.llen('starts')) > i ? true : undefined,
        );
      }
      const starts = await readStarts(redis.client);
      expect(starts.map((s) => s.id)).toEqual(ids);
      const late = starts.map((s) => Math.round(s.startedAt - s.dueAt)).sort((a, b) => a - b);
      expect(
        late.filter((ms) => ms < 0),
        `early: ${late}`,
      ).toEqual([]);
      // The median: one reply delay and a little; a round trip more before.
      expect(late[3], `lateness in ms: ${late}`).toBeLessThan(REPLY_DELAY_MS + 30);
    } finally {
      await launcher.stop(0);
      await queue.close();
      await proxy.close();
    }
  }, 60_000);
});
