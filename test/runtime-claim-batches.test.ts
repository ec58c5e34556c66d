// A full actor claims in batches. An actor holds up to `concurrency` messages, those leased
// ahead of their due time included: in a steady stream it is full most of the time, and it
// claimed again each time one handler ended, ~13 messages a call in the seed, where each call
// costs Redis ~150 µs besides its messages. While messages it leased ahead still wait for
// their time, nothing in Redis is due sooner, so it now claims shortly before the last of
// them instead (actor-claim.ts claimLater). Nothing may start early or late for it.
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { readStarts, type Start } from './helpers/intake.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** One group's launcher recording every start in the list `starts`. */
const launch = (prefix: string, lookaheadMs?: number) =>
  startActors({
    redis: redis.server.url,
    prefix,
    groups: 1,
    logDir: tempDir(),
    handler: fixture('starts.mjs'),
    // Not niced: beside busy processes (CI runs three files at once) a nice-10 actor's starts
    // wait for the core, and these bounds are on lateness (test/intake's idle-list test).
    actorNice: 0,
    ...(lookaheadMs === undefined ? {} : { lookaheadMs }),
  });

async function scriptCalls(): Promise<number> {
  const info = await redis.client.info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe('a full actor', () => {
  it('claims a batch at a time, none early, each message once', async () => {
    const prefix = freshPrefix('batches');
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await redis.client.del('starts');
    // 2,000 a second for 3 s, in one group: an actor of 100 holds 50 ms of them.
    const count = 6000;
    const from = Date.now() + 1500;
    for (let i = 0; i < count; i += 1000) {
      await queue.addBulk(
        Array.from({ length: 1000 }, (_, k) => ({
          body: {},
          options: { group: 0, runAt: from + (i + k) / 2 },
        })),
      );
    }
    const before = await scriptCalls();
    const launcher = await launch(prefix);
    try {
      await waitFor('every start', async () =>
        (await redis.client.llen('starts')) >= count ? true : undefined,
      );
      const calls = (await scriptCalls()) - before;
      const starts = await readStarts(redis.client);
      expect(new Set(starts.map((s) => s.id)).size).toBe(count);
      expect(starts.filter((s) => s.startedAt < s.dueAt)).toEqual([]);
      // One claim a handler's end would be ~6,000 / 13; in batches it is a few a 50 ms.
      expect(calls, `${calls} script calls for ${count} messages`).toBeLessThan(count / 25);
    } finally {
      await launcher.stop(0);
      await queue.close();
    }
  }, 60_000);

  it('claims at once for an add due now while it holds a message leased ahead', async () => {
    const prefix = freshPrefix('token');
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await redis.client.del('starts');
    const launcher = await launch(prefix, 1000);
    try {
      // One due now and one due in 900 ms: one claim leases both (the lookahead is 1 s), and
      // the second waits for its time in the actor.
      await queue.addBulk([
        { body: { first: true }, options: { group: 0 } },
        { body: { later: true }, options: { group: 0, delay: 900 } },
      ]);
      await waitFor('the first start', async () =>
        (await redis.client.llen('starts')) >= 1 ? true : undefined,
      );
      const [now] = await queue.addBulk([{ body: { now: true }, options: { group: 0 } }]);
      await waitFor('the add due now', async () =>
        (await redis.client.llen('starts')) >= 2 ? true : undefined,
      );
      const first = (await readStarts(redis.client))[1] as Start;
      expect(first.id).toBe(now);
      // Not after the one leased ahead (~700 ms on): its token ends the actor's wait.
      expect(first.startedAt - first.dueAt).toBeLessThan(300);
    } finally {
      await launcher.stop(0);
      await queue.close();
    }
  }, 30_000);
});
