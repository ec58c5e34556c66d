// A handler's rejection is a failure on the actor thread, not a success (issue 24, section 3:
// a mutation that counted it done was seen only by the piscina tests). No pool: each way an
// async handler can fail (an async throw, a rejected promise, a rejecting thenable, a late
// rejection) is retried and then dead-lettered with its error, never done. Real redis-server.
import { afterAll, describe, expect, it } from 'vitest';
import { type Launcher, Queue, startActors } from '../src/index.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const PREFIX = 'rejects';
const BODIES = ['async throw', 'rejected', 'thenable', 'late'];
let launcher: Launcher | undefined;
let queue: Queue | undefined;

afterAll(async () => {
  await launcher?.stop();
  await queue?.close();
});

describe('an async handler that rejects, on the actor thread', () => {
  it('fails the job: retried, then a dead letter with its error, never done', async () => {
    const where = { redis: redis.server.url, prefix: PREFIX, groups: 1 };
    queue = new Queue(where);
    const ids = await queue.addBulk(
      BODIES.map((body) => ({
        body,
        options: { attempts: 2, backoff: { type: 'fixed' as const, delay: 0 } },
      })),
    );
    launcher = await startActors({
      ...where,
      handler: fixture('rejects.mjs'),
      logDir: tempDir(),
      publishStats: false,
    });
    const ended = await Promise.all(ids.map((id) => queue?.waitFor(id, { timeoutMs: 20_000 })));
    expect(ended).toEqual(BODIES.map((body) => ({ state: 'dead', error: `failed: ${body}` })));
    for (const id of ids) {
      expect(await queue.get(id)).toMatchObject({
        state: 'dead',
        attempts: 2,
        deadReason: 'failed 2 of 2 attempts',
      });
    }
    expect((await queue.listCounts()).done).toBe(0);
    // The actor's own figures agree: 8 failures (4 retried, 4 dead), nothing done.
    const totals = await waitFor('the actor figures', async () => {
      const { totals } = await (launcher as Launcher).stats();
      return totals.failed >= 8 && totals.dead >= 4 ? totals : undefined;
    });
    expect(totals).toMatchObject({ done: 0, failed: 8, retried: 4, dead: 4 });
  });
});
