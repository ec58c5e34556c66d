// waitFor's onProgress for a job that ended before the call: the docs promise it is called
// "first with the last one reported before the call", so a caller that came late (a fast
// handler, a wait started after the fact) still learns the job's last progress, as it does
// for a job still running. Real redis-server.
import { expect, it } from 'vitest';
import type { Message } from '../src/index.js';
import { claimAtLeast, useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

it('tells onProgress the last progress of a job that ended before the wait', async () => {
  const q = await redis.queue();
  const done = await q.add('fast', { group: 0 });
  const [job] = (await claimAtLeast(q, 0, 1, 30_000)) as [Message];
  await q.progress(job, 40);
  await q.progress(job, { done: 7, of: 7 });
  job.result = 'ok';
  await q.ack([job]);
  const seen: unknown[] = [];
  expect(await q.waitFor(done, { onProgress: (value) => seen.push(value) })).toEqual({
    state: 'done',
    result: 'ok',
  });
  expect(seen).toEqual([{ done: 7, of: 7 }]);

  // A dead one too, and a throwing callback changes nothing.
  const dead = await q.add('doomed', { group: 1, attempts: 1 });
  const [doomed] = (await claimAtLeast(q, 1, 1, 30_000)) as [Message];
  await q.progress(doomed, 60);
  await q.fail(doomed, new Error('broke'), { retry: false });
  const told: unknown[] = [];
  const onProgress = (value: unknown) => {
    told.push(value);
    throw new Error('caller bug');
  };
  expect(await q.waitFor(dead, { onProgress })).toMatchObject({ state: 'dead' });
  expect(told).toEqual([60]);

  // A job that never reported: onProgress is not called.
  const quiet = await q.add('quiet', { group: 0 });
  const [silent] = (await claimAtLeast(q, 0, 1, 30_000)) as [Message];
  await q.ack([silent]);
  const none: unknown[] = [];
  await q.waitFor(quiet, { onProgress: (value) => none.push(value) });
  expect(none).toEqual([]);
});
