/**
 * Issue 24 §3: a property of the rate limits, tried on random inputs with fast-check against a
 * small model, on a real redis-server through the real runtime (claim + RateGate, one actor).
 * Random job names, priorities, due times, per-name and whole-queue limits, batch and
 * concurrency: the order in which jobs start, restricted to each name, is the order without
 * limits (priority, then due time, then add order); every job starts once, on its first
 * attempt, with the due time it was given.
 * SKYQ_PROPERTY_RUNS (10 in CI, about 1.5 s a run) and SKYQ_PROPERTY_SEED: test/helpers/property.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import type { RateLimitOption } from '../src/queue/ratelimit/spec.js';
import { startActors } from '../src/start.js';
import { propertyParameters } from './helpers/property.js';
import { redisNow } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

const NAMES = ['a', 'b', 'c'] as const;
/** How far ahead of the add the due times lie: each is in the future when added. */
const AHEAD_MS = 300;

interface Job {
  name: string | undefined;
  priority: number;
  /** ms after the earliest due time */
  offset: number;
}

interface Run {
  /** per name: messages per 100 ms (null: no limit); `a` always has one */
  limits: Record<(typeof NAMES)[number], number | null>;
  /** the whole queue's messages per 100 ms, or null */
  all: number | null;
  batch: number;
  concurrency: number;
  jobs: Job[];
}

const perTenth = (min: number, max: number) => fc.integer({ min, max });
const runs: fc.Arbitrary<Run> = fc.record({
  limits: fc.record({
    a: perTenth(2, 8),
    b: fc.option(perTenth(2, 8)),
    c: fc.option(perTenth(2, 8)),
  }),
  all: fc.option(perTenth(5, 40)),
  batch: fc.integer({ min: 1, max: 12 }),
  concurrency: fc.integer({ min: 1, max: 12 }),
  jobs: fc.array(
    fc.record({
      name: fc.constantFrom<string | undefined>(...NAMES, undefined),
      priority: fc.integer({ min: 0, max: 2 }),
      offset: fc.integer({ min: 0, max: 300 }),
    }),
    { minLength: 4, maxLength: 30 },
  ),
});

interface Start {
  id: string;
  dueAt: number;
  attempts: number;
  body: { i: number };
}

let runCount = 0;

async function check(run: Run): Promise<void> {
  const prefix = `rprop${++runCount}`;
  await redis.client.del('starts');
  const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
  await queue.ready();
  const first = (await redisNow(redis.client)) + AHEAD_MS;
  const runAt = (job: Job) => first + job.offset;
  const ids = await queue.addBulk(
    run.jobs.map((job, i) => ({
      body: { i },
      options: {
        priority: job.priority,
        runAt: runAt(job),
        ...(job.name ? { name: job.name } : {}),
      },
    })),
  );
  // Every job is due before the launcher starts: the order without limits is then the claim's.
  const lastDue = first + Math.max(...run.jobs.map((job) => job.offset));
  await waitFor('every job due', async () =>
    (await redisNow(redis.client)) > lastDue ? true : undefined,
  );
  const rateLimit: RateLimitOption = {};
  for (const name of NAMES) {
    const max = run.limits[name];
    if (max !== null) rateLimit[name] = { max, perMs: 100 };
  }
  if (run.all !== null) rateLimit['*'] = { max: run.all, perMs: 100 };
  const launcher = await startActors({
    redis: redis.server.url,
    prefix,
    groups: 1,
    batch: run.batch,
    concurrency: run.concurrency,
    rateLimit,
    handler: fixture('starts.mjs'),
    logDir: tempDir(),
    publishStats: false,
  });
  try {
    const lines = await waitFor(
      `${run.jobs.length} starts`,
      async () => {
        const seen = await redis.client.lrange('starts', 0, -1);
        return seen.length >= run.jobs.length ? seen : undefined;
      },
      20_000,
    );
    // One group, one actor: the fixture's records are in start order.
    const starts = lines.map((line) => JSON.parse(line) as Start);
    expect(starts.map((s) => s.id).sort()).toEqual([...ids].sort()); // each once, none lost
    for (const start of starts) {
      const job = run.jobs[start.body.i] as Job;
      expect(start.attempts).toBe(1);
      expect(start.dueAt).toBe(runAt(job));
    }
    for (const name of [...NAMES, undefined]) {
      const model = run.jobs
        .map((job, i) => ({ ...job, i }))
        .filter((job) => job.name === name)
        .sort((x, y) => x.priority - y.priority || x.offset - y.offset || x.i - y.i)
        .map((job) => job.i);
      const started = starts.map((s) => s.body.i).filter((i) => (run.jobs[i] as Job).name === name);
      expect(started, `order of ${name ?? 'unnamed'}`).toEqual(model);
    }
  } finally {
    await launcher.stop();
    await queue.close();
  }
}

describe('rate limits, tried with random inputs', () => {
  it('started order equals the order without limits, restricted to each name', async () => {
    await fc.assert(fc.asyncProperty(runs, check), {
      ...propertyParameters(10),
      // Each run starts a launcher: no shrinking (the seed and the failing input are printed).
      endOnFailure: true,
    });
  }, 180_000);
});
