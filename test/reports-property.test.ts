// Random report batches against a model (fast-check, real Redis): whatever the batches (lines
// logged between two calls, over 100 at once, progress now and then, several jobs in one call),
// get() shows each job's last progress, its last 100 lines in order and how many it logged;
// an ack forgets them. SKYQ_PROPERTY_RUNS / SKYQ_PROPERTY_SEED (test/helpers/property.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from '../src/index.js';
import type { PendingReport } from '../src/queue/reports.js';
import { propertyParameters } from './helpers/property.js';
import { claimAtLeast, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const JOBS = 3;

/** One report call: for some of the jobs, lines logged since the last call and maybe a progress. */
const call = fc.array(
  fc.record({
    job: fc.integer({ min: 0, max: JOBS - 1 }),
    lines: fc.integer({ min: 0, max: 160 }),
    progress: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
  }),
  { minLength: 1, maxLength: JOBS },
);

describe('report batches', () => {
  it('keep what the model keeps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 8 }), async (calls) => {
        const q = await redis.queue({ groups: 1, keepDone: false });
        await q.addBulk(Array.from({ length: JOBS }, (_, i) => ({ body: i })));
        const jobs = await claimAtLeast(q, 0, JOBS);
        const model = jobs.map(() => ({
          lines: [] as string[],
          count: 0,
          progress: undefined as unknown,
        }));
        for (const [n, entries] of calls.entries()) {
          const batch = new Map<Message, PendingReport>();
          for (const { job, lines, progress } of entries) {
            const message = jobs[job] as Message;
            const pending = batch.get(message) ?? { progress: null, logged: 0, lines: [] };
            const text = Array.from(
              { length: lines },
              (_, i) => `c${n} j${job} l${pending.logged + i}`,
            );
            pending.logged += lines;
            pending.lines.push(...text);
            if (progress !== undefined) pending.progress = String(progress);
            batch.set(message, pending);
            const m = model[job] as (typeof model)[0];
            m.lines = [...m.lines, ...text].slice(-100);
            m.count += lines;
            if (progress !== undefined) m.progress = progress;
          }
          expect(await q.sendReports(0, batch)).toEqual({ reported: batch.size, refused: [] });
        }
        for (const [i, job] of jobs.entries()) {
          const info = await q.get(job.id);
          const m = model[i] as (typeof model)[0];
          expect(info?.progress).toEqual(m.progress);
          expect(info?.logCount).toEqual(m.count === 0 ? undefined : m.count);
          expect(info?.logs).toEqual(m.count === 0 ? undefined : m.lines);
        }
        await q.ack(jobs);
        expect(await redis.plain.keys(`{${q.config.prefix}:0}:log:*`)).toEqual([]);
        expect(await redis.plain.exists(`{${q.config.prefix}:0}:progress`)).toBe(0);
        await q.close();
      }),
      propertyParameters(25),
    );
  }, 120_000);
});
