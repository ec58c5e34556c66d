/**
 * How handlers run: on a piscina pool when asked, failures retried with backoff and then
 * dead-lettered, and a handler over the time limit failed (its signal aborted).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, recorded, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

const backoff = { type: 'fixed', delay: 50 } as const;

describe('handlers', () => {
  it('run on a piscina pool; a failing one is retried, then dead-lettered', async () => {
    const where = { redis: redis.server.url, prefix: 'pool', groups: 2, attempts: 2, backoff };
    const queue = new Queue(where);
    const logDir = tempDir();
    const launcher = await startActors({
      ...where,
      logDir,
      handler: fixture('record.mjs'),
      pool: 1,
    });
    try {
      const good = await queue.addBulk(
        Array.from({ length: 10 }, () => ({ body: { list: 'pool' } })),
      );
      const bad = await queue.add({ fail: 'boom' }, { group: 1 });
      await waitFor('the good ones done', async () =>
        (await redis.client.llen('pool')) >= 10 ? true : undefined,
      );
      expect((await recorded(redis.client, 'pool')).sort()).toEqual([...good].sort());
      const [letter] = await waitFor('the dead letter', async () => {
        const letters = await queue.deadLetters.list();
        return letters.length > 0 ? letters : undefined;
      });
      expect(letter).toMatchObject({
        id: bad,
        attempts: 2,
        lastError: 'boom',
        reason: 'failed 2 of 2 attempts',
      });
      const log = await waitFor('the failure lines', () => {
        const text = readFileSync(join(logDir, 'actor-1.log'), 'utf8');
        return text.includes('"event":"dead"') ? text : undefined;
      });
      expect(log).toMatch(
        new RegExp(`"level":40,.*"event":"failed","job":"${bad}","attempt":1,"err":"boom"`),
      );
      expect(log).toMatch(new RegExp(`"level":50,.*"event":"dead","job":"${bad}","attempt":2`));
      const stats = await launcher.stats();
      expect(stats.totals).toMatchObject({ done: 10, failed: 2, retried: 1, dead: 1, inFlight: 0 });
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });

  it('over the time limit: its signal is aborted and the message fails; others go on', async () => {
    const where = { redis: redis.server.url, prefix: 'slow', groups: 1, attempts: 1, backoff };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      logDir: tempDir(),
      handler: fixture('record.mjs'),
      timeoutMs: 200,
    });
    try {
      const slow = await queue.add({ list: 'slow', ms: 5000 });
      const quick = await queue.add({ list: 'slow', ms: 10 });
      const [letter] = await waitFor('the dead letter', async () => {
        const letters = await queue.deadLetters.list();
        return letters.length > 0 ? letters : undefined;
      });
      expect(letter).toMatchObject({ id: slow, lastError: 'handler timed out after 200 ms' });
      await waitFor('the quick one done', async () =>
        (await recorded(redis.client, 'slow')).includes(quick) ? true : undefined,
      );
      expect(await recorded(redis.client, 'slow')).toEqual([quick]);
      const aborted = await waitFor('the abort', async () => {
        const ids = await recorded(redis.client, 'slow:aborted');
        return ids.length > 0 ? ids : undefined;
      });
      expect(aborted).toEqual([slow]);
    } finally {
      await launcher.stop(0);
      await queue.close();
    }
  });
});
