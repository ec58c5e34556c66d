// A handler that leaves an error behind after its job ended (thrown from a timer, a promise left
// rejected) does not end its actor thread: the error is logged and kept as the actor's last
// error. Before, Node ended the thread, and every job the actor held lost an attempt to its
// lease. Real redis-server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('errors a handler leaves behind', () => {
  it('are logged, and the actor thread goes on', async () => {
    const where = { redis: redis.server.url, prefix: 'stray', groups: 1 };
    const queue = new Queue(where);
    const logDir = tempDir();
    const launcher = await startActors({
      ...where,
      handler: fixture('stray-errors.mjs'),
      logDir,
      publishStats: false,
    });
    try {
      const ids = await queue.addBulk(['throw', 'reject', 'ok'].map((body) => ({ body })));
      for (const id of ids) await queue.waitFor(id, { timeoutMs: 10_000 });
      const log = await waitFor('both lines', () => {
        const text = readFileSync(join(logDir, 'actor-0.log'), 'utf8');
        return (text.match(/"event":"stray-error"/g) ?? []).length >= 2 ? text : undefined;
      });
      expect(log).toMatch(/"kind":"uncaught exception","err":"thrown from a timer","stack":"Error/);
      expect(log).toMatch(/"kind":"unhandled rejection","err":"left rejected"/);
      // A job after them runs on the same thread, at its first attempt.
      const after = await queue.add('ok');
      expect(await queue.waitFor(after, { timeoutMs: 10_000 })).toEqual({
        state: 'done',
        result: 'returned',
      });
      expect(await queue.get(after)).toMatchObject({ attempts: 1 });
      expect(launcher.restarts(0)).toBe(0);
      const { actors } = await launcher.stats();
      expect(actors[0]?.stat?.lastError).toMatch(
        /in handler code: (thrown from a timer|left rejected)/,
      );
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
