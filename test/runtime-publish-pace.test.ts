// A launcher publishes its figures once a second, on a grid of the coordinator's clock. A timer
// can fire a little before its grid point (libuv's loop clock is whole ms), and the tick then
// asked for the time to the next point, got a fraction of a ms and ran again: two publishes
// 1 ms apart, every few seconds under load, and a dashboard reading between them found a
// "new" publish with nothing new in it.
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the launcher publishing its figures', () => {
  it('publishes once a second under steady load, never twice in a row', async () => {
    const prefix = freshPrefix('pace');
    const launcher = await startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      logDir: tempDir(),
      handler: fixture('http-handler.mjs'),
    });
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    try {
      const key = `${prefix}:launcher:${launcher.id}`;
      const seen: number[] = [];
      const started = Date.now();
      // Messages all along, so every publish has new figures (an unchanged one is skipped).
      const load = async () => {
        while (Date.now() - started < 8000) {
          await queue.addBulk(
            Array.from({ length: 10 }, (_, i) => ({ body: {}, options: { group: i % 2 } })),
          );
          await sleep(50);
        }
      };
      const watch = async () => {
        while (Date.now() - started < 8000) {
          const text = await queue.client.get(key);
          const at = text ? (JSON.parse(text) as { at: number }).at : undefined;
          if (at !== undefined && at !== seen.at(-1)) seen.push(at);
          await sleep(1);
        }
      };
      await Promise.all([load(), watch()]);
      const gaps = seen.slice(1).map((at, i) => at - (seen[i] as number));
      expect(gaps.length, gaps.join(' ')).toBeGreaterThanOrEqual(5);
      // Each about a second; a busy machine may stretch one, never shrink it to a few ms.
      expect(
        gaps.filter((gap) => gap < 500),
        gaps.join(' '),
      ).toEqual([]);
    } finally {
      await queue.close();
      await launcher.stop(0);
    }
  }, 30_000);
});
