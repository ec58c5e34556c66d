/**
 * Issue 28 §3: a sorted set's holding list outlives its launcher. What a launcher left when
 * killed (its holding list for `seta`, registered, with members it had moved and added in part)
 * is adopted by another launcher, any launcher with an intake, even one that reads only lists:
 * each member goes in once, under the id its position gave it, with its score as its due time
 * and its exact bytes as its body.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { entryOf, itemId, ownZsetHolding, registryKeys } from '../src/queue/intake/holding.js';
import { startActors } from '../src/start.js';
import { readStarts } from './helpers/intake.js';
import { redisNow } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const GROUPS = 4;

describe('sorted-set holding lists after a crash', () => {
  it("a dead launcher's seta holding list is adopted: each member once, due at its score", async () => {
    const prefix = 'zadopt';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: GROUPS });
    await queue.ready();
    const old = ownZsetHolding(prefix, 'old-launcher', {
      key: 'seta',
      scoreUnit: 'ms',
      group: 2,
      priority: 0,
      index: 0,
    });
    const now = await redisNow(redis.client);
    const members = [
      { due: now - 3000, member: Buffer.from('first') },
      { due: now - 2000, member: Buffer.from([0xff, 0x3a, 0x00, 0x31]) }, // binary, a colon
      { due: now - 1000, member: Buffer.from('third: with a colon') },
      { due: 0, member: Buffer.from('scored -inf') }, // due since ever: due from its add
    ];
    // As intake-zmove.lua writes them: `<due ms>:<member>`, oldest on the right.
    const items = members.map(({ due, member }) => Buffer.concat([Buffer.from(`${due}:`), member]));
    await redis.client.lpush(old.key, ...items);
    const keys = registryKeys(prefix);
    await redis.client.zadd(keys.alive, now - 60_000, old.owner);
    await redis.client.hset(keys.holding, old.key, entryOf(old));
    // It had added the first one already (still pending: due in a while), then died.
    const pendingUntil = now + 1500;
    await queue.add('first', { id: itemId(old, 0), group: 2, runAt: pendingUntil });
    await redis.client.del('starts');
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: GROUPS,
      intake: ['some-list'],
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const starts = await waitFor('4 starts', async () => {
        const all = await readStarts(redis.client);
        return all.length >= 4 ? all : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would show by now
      expect((await readStarts(redis.client)).length).toBe(4);
      const byId = new Map(starts.map((s) => [s.id, s]));
      for (const [i, { due, member }] of members.entries()) {
        const start = byId.get(itemId(old, i));
        expect(start, `member ${i}`).toBeDefined();
        const body = start?.body;
        const bytes =
          typeof body === 'string' ? Buffer.from(body) : Buffer.from(body?.hex ?? '', 'hex');
        expect(bytes.equals(member)).toBe(true);
        if (i === 0)
          expect(start?.dueAt).toBe(pendingUntil); // the add before the crash stood
        else if (due > 0) expect(start?.dueAt).toBe(due);
        else expect(start?.dueAt).toBeGreaterThanOrEqual(now);
        expect((await queue.get(itemId(old, i)))?.group).toBe(2);
      }
      expect(await redis.client.exists(old.key)).toBe(0);
      expect(await redis.client.hexists(keys.holding, old.key)).toBe(0);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 60_000);
});
