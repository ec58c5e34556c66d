// A handler may throw anything, and return anything: a Proxy whose traps throw, an Error whose
// message getter throws, an object String() cannot convert, a result whose `then` getter throws,
// a function. Each fails (or finishes) its own job with a readable reason; the actor thread
// lives on (no restart), and the other jobs held with it, in the same claim or pool batch, are
// done at their first attempt. Before, reading such a value threw in the actor's failure path
// and ended its thread (every held job lost an attempt to "lease expired"), and on the pool one
// such job failed the whole batch with the reading's error. Real redis-server.
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { fixture, tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const FAILING = {
  proxy: 'a thrown value that cannot be turned into text ([object])',
  getters: 'Error whose message cannot be read',
  bare: 'a thrown value that cannot be turned into text ([object Object])',
  thenGetter: 'read boom',
};

describe.each([0, 1])('odd throws and results (pool %i)', (pool) => {
  it('fail their own job only, and the actor is never restarted', async () => {
    const where = { redis: redis.server.url, prefix: `odd${pool}`, groups: 1 };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      handler: fixture('odd-throws.mjs'),
      pool,
      paused: true, // every job in one claim, and on the pool in one batch
      logDir: tempDir(),
      publishStats: false,
    });
    try {
      const options = { attempts: 1 };
      const fine = await queue.addBulk(Array.from({ length: 4 }, () => ({ body: 'ok', options })));
      const odd = await queue.addBulk(Object.keys(FAILING).map((body) => ({ body, options })));
      const fn = await queue.add('function', options);
      await launcher.resume();
      for (const id of [...fine, ...odd, fn]) await queue.waitFor(id, { timeoutMs: 15_000 });
      for (const id of fine) {
        expect(await queue.get(id)).toMatchObject({ state: 'done', attempts: 1, result: 'fine' });
      }
      for (const [i, error] of Object.values(FAILING).entries()) {
        expect(await queue.get(odd[i] as string)).toMatchObject({
          state: 'dead',
          attempts: 1,
          lastError: error,
        });
      }
      expect(await queue.get(fn)).toMatchObject({
        state: 'done',
        resultKept: 'unserialisable',
        lastError: 'function is not a JSON value',
      });
      expect(launcher.restarts(0)).toBe(0);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });
});
