/**
 * `{prefix}:launchers` (src/runtime/registry.ts) stays bounded (issue 13, item 5.5): a
 * launcher that dies uncleanly never withdraws its entry, and before this only readers
 * (`skyq stats`, the dashboard) pruned, so with none running it grew by one per crash.
 */
import { describe, expect, it } from 'vitest';
import type { LauncherStats } from '../src/runtime/launcher-stats.js';
import { publishStats } from '../src/runtime/registry.js';
import { freshPrefix, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

describe('the launcher index', () => {
  it('is pruned by every publisher and expires after its last one', async () => {
    const prefix = freshPrefix('lr');
    const index = `${prefix}:launchers`;
    // 500 launchers that were killed over the past days, leaving their entries behind.
    const hourAgo = Date.now() - 3_600_000;
    const dead = Array.from({ length: 500 }, (_, i) => [hourAgo - i * 1000, `dead-${i}`]).flat();
    await redis.plain.zadd(index, ...(dead as (string | number)[]));
    const stats = { launcherId: 'live-1', actors: [] } as unknown as LauncherStats;
    await publishStats(redis.plain, prefix, stats);
    expect(await redis.plain.zrange(index, 0, -1)).toEqual(['live-1']);
    const ttl = await redis.plain.pttl(index);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
