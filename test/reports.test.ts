// Progress and log lines of running jobs through the primitives (queue.progress, queue.log):
// what get() shows, the bounds (4 KiB, 1 KiB, the last 100 lines), refusal once the lease is
// lost, that both go with the record wherever it is forgotten, the progress events and
// waitFor's onProgress; and the same on a 3-master cluster. Real redis-server.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { type Message, Queue, type QueueEvent } from '../src/index.js';
import { claimAtLeast, freshPrefix, plainClient, useQueueRedis, waitFor } from './helpers/queue.js';
import { type RedisClusterHandle, startCluster } from './helpers/redis.js';

const redis = useQueueRedis();

async function claimOne(q: Queue, group: number, leaseMs = 30_000): Promise<Message> {
  return (await claimAtLeast(q, group, 1, leaseMs))[0] as Message;
}

/** The keys a job's reports live in: its field of the progress hash, and its log list. */
async function reportKeys(q: Queue, group: number, id: string) {
  const progress = keyOf(q.config.prefix, group, 'progress');
  return {
    field: await redis.plain.hexists(progress, id),
    list: await redis.plain.exists(`{${q.config.prefix}:${group}}:log:${id}`),
  };
}

describe('progress and log lines', () => {
  it('show in get(): the last progress, the lines in order, how many were logged', async () => {
    const q = await redis.queue();
    const id = await q.add('work', { group: 0 });
    const job = await claimOne(q, 0);
    expect(await q.get(id)).not.toHaveProperty('progress');
    expect(await q.progress(job, 10)).toBe(true);
    expect(await q.log(job, 'step one')).toBe(true);
    expect(await q.progress(job, { done: 2, of: 7, stage: 'upload' })).toBe(true);
    expect(await q.log(job, 'step two: ünïcode\nand a newline')).toBe(true);
    const info = await q.get(id);
    expect(info).toMatchObject({
      state: 'active',
      progress: { done: 2, of: 7, stage: 'upload' },
      logs: ['step one', 'step two: ünïcode\nand a newline'],
      logCount: 2,
    });
    job.result = 'ok';
    await q.ack([job]);
    // A kept done job keeps them with its record.
    expect(await q.get(id)).toMatchObject({ state: 'done', progress: { done: 2 }, logCount: 2 });
  });

  it('refuse bad input with one line, and take exactly the bounds', async () => {
    const q = await redis.queue();
    const id = await q.add('bounds', { group: 1 });
    const job = await claimOne(q, 1);
    await expect(q.progress(job, 101)).rejects.toThrow(
      'progress: a number must be from 0 to 100 (a percentage) (got 101)',
    );
    await expect(q.progress(job, -1)).rejects.toThrow('from 0 to 100');
    await expect(q.progress(job, Number.NaN)).rejects.toThrow('from 0 to 100');
    await expect(q.progress(job, undefined)).rejects.toThrow(
      'progress: must be a number from 0 to 100 or a JSON value',
    );
    await expect(q.progress(job, 10n)).rejects.toThrow('or a JSON value');
    // 4096 bytes of JSON pass, 4097 do not.
    const fits = 'x'.repeat(4094); // with its quotes: 4096
    expect(await q.progress(job, fits)).toBe(true);
    await expect(q.progress(job, `${fits}x`)).rejects.toThrow(
      'progress: must be at most 4096 bytes as JSON, got 4097',
    );
    expect(await q.log(job, 'é'.repeat(512))).toBe(true); // 1024 bytes
    await expect(q.log(job, `${'é'.repeat(512)}.`)).rejects.toThrow(
      'line: must be at most 1024 bytes (UTF-8), got 1025',
    );
    await expect(q.log(job, 42 as unknown as string)).rejects.toThrow('line: must be a string');
    const info = await q.get(id);
    expect(info?.progress).toBe(fits);
    expect(info?.logs).toEqual(['é'.repeat(512)]);
  });

  it('keep the last 100 lines, and count them all', async () => {
    const q = await redis.queue();
    const id = await q.add('chatty', { group: 2 });
    const job = await claimOne(q, 2);
    for (let i = 1; i <= 150; i++) await q.log(job, `line ${i}`);
    const info = await q.get(id);
    expect(info?.logCount).toBe(150);
    expect(info?.logs).toHaveLength(100);
    expect(info?.logs?.[0]).toBe('line 51');
    expect(info?.logs?.[99]).toBe('line 150');
    expect(await redis.plain.llen(`{${q.config.prefix}:2}:log:${id}`)).toBe(100);
  });

  it('are refused once the lease is lost, as the ack is', async () => {
    const q = await redis.queue();
    const id = await q.add('lost', { group: 3 });
    const first = await claimOne(q, 3, 50);
    expect(await q.log(first, 'from the first consumer')).toBe(true);
    await sleep(120); // the lease runs out: the next claim takes the message again
    const second = await claimOne(q, 3);
    expect(second.token).not.toBe(first.token);
    expect(await q.log(first, 'too late')).toBe(false);
    expect(await q.progress(first, 99)).toBe(false);
    expect(await q.log(second, 'from the second')).toBe(true);
    expect(await q.ack([first])).toBe(0);
    expect((await q.get(id))?.logs).toEqual(['from the first consumer', 'from the second']);
    expect((await q.get(id))?.progress).toBeUndefined();
  });

  it('go with the record when the history forgets it, and at once when nothing is kept', async () => {
    const q = await redis.queue({ keepDone: { count: 1, ageMs: 0 } });
    const a = await q.add('a', { group: 4 });
    const jobA = await claimOne(q, 4);
    await q.progress(jobA, 50);
    await q.log(jobA, 'a line');
    await q.ack([jobA]);
    expect(await reportKeys(q, 4, a)).toEqual({ field: 1, list: 1 });
    // Two more done: the history keeps one, so a is trimmed, and its reports with it.
    for (const body of ['b', 'c']) {
      await q.add(body, { group: 4 });
      await q.ack([await claimOne(q, 4)]);
    }
    expect(await q.get(a)).toBeNull();
    expect(await reportKeys(q, 4, a)).toEqual({ field: 0, list: 0 });
    expect(await redis.plain.exists(keyOf(q.config.prefix, 4, 'progress'))).toBe(0);

    const off = await redis.queue({ keepDone: false });
    const d = await off.add('d', { group: 4 });
    const jobD = await claimOne(off, 4);
    await off.log(jobD, 'gone with the ack');
    await off.ack([jobD]);
    expect(await reportKeys(off, 4, d)).toEqual({ field: 0, list: 0 });
  });

  it('of other jobs stay when one is forgotten among more reporters than ids forgotten', async () => {
    const q = await redis.queue({ keepDone: false });
    await q.addBulk(Array.from({ length: 4 }, (_, i) => ({ body: i, options: { group: 8 } })));
    const jobs = await claimAtLeast(q, 8, 4);
    for (const job of jobs) await q.log(job, `line of ${job.id}`);
    const [gone, ...staying] = jobs as [Message, ...Message[]];
    await q.ack([gone]); // 1 id forgotten, 4 reporters: their fields are read, not the hash's
    expect(await reportKeys(q, 8, gone.id)).toEqual({ field: 0, list: 0 });
    for (const job of staying) {
      expect(await reportKeys(q, 8, job.id)).toEqual({ field: 1, list: 1 });
      expect((await q.get(job.id))?.logs).toEqual([`line of ${job.id}`]);
    }
    await q.ack(staying); // 3 ids, 3 reporters: the hash's keys are read
    for (const job of staying)
      expect(await reportKeys(q, 8, job.id)).toEqual({ field: 0, list: 0 });
  });

  it('go with a dead letter when it is purged, with a cancelled retry, and with an id added anew', async () => {
    const q = await redis.queue({ attempts: 1 });
    const dead = await q.add('dies', { group: 5 });
    const jobDead = await claimOne(q, 5);
    await q.log(jobDead, 'before dying');
    await q.fail(jobDead, new Error('boom'));
    expect((await q.get(dead))?.logs).toEqual(['before dying']);
    expect(await q.deadLetters.purge({ ids: [dead] })).toBe(1);
    expect(await reportKeys(q, 5, dead)).toEqual({ field: 0, list: 0 });

    const retried = await redis.queue({ attempts: 3, backoff: { type: 'fixed', delay: 60_000 } });
    const again = await retried.add('retried', { group: 5 });
    const jobAgain = await claimOne(retried, 5);
    await retried.progress(jobAgain, 30);
    await retried.fail(jobAgain, new Error('later'));
    expect((await retried.get(again))?.progress).toBe(30); // kept across attempts
    expect(await retried.cancel(again)).toBe(true);
    expect(await reportKeys(retried, 5, again)).toEqual({ field: 0, list: 0 });

    const kept = await redis.queue();
    const id = await kept.add('first run', { group: 5, id: 'same-id' });
    const run = await claimOne(kept, 5);
    await kept.log(run, 'first run line');
    await kept.ack([run]);
    await kept.add('second run', { group: 5, id });
    const info = await kept.get(id);
    expect(info?.state).not.toBe('done');
    expect(info?.logs).toBeUndefined();
    expect(await reportKeys(kept, 5, id)).toEqual({ field: 0, list: 0 });
  });

  it('publish progress events with events off, and tell waitFor’s onProgress', async () => {
    const q = await redis.queue();
    const id = await q.add('watched', { group: 6 });
    const job = await claimOne(q, 6);
    await q.progress(job, 5); // before the wait: onProgress is told of it first
    const seen: unknown[] = [];
    const waiting = q.waitFor(id, { onProgress: (value) => seen.push(value), timeoutMs: 10_000 });
    await waitFor('the first progress', () => (seen.length === 1 ? true : undefined));
    await sleep(50); // the reader's position is fixed by now
    await q.progress(job, 40);
    await q.log(job, 'lines are not progress');
    await q.progress(job, { phase: 'last' });
    await waitFor('both progress events', () => (seen.length === 3 ? true : undefined));
    job.result = 'finished';
    await q.ack([job]);
    expect(await waiting).toEqual({ state: 'done', result: 'finished' });
    expect(seen).toEqual([5, 40, { phase: 'last' }]);

    const events: QueueEvent[] = [];
    for await (const event of q.events({ groups: [6], from: 'start', follow: false })) {
      if (event.id === id) events.push(event);
    }
    expect(events.map((e) => [e.type, e.progress])).toEqual([
      ['progress', 5],
      ['progress', 40],
      ['progress', { phase: 'last' }],
      ['done', undefined],
    ]);
    await expect(q.waitFor(id, { onProgress: 3 as never })).rejects.toThrow(
      'onProgress: must be a function',
    );
  });

  it('of many jobs go in one call, one progress entry for all of them, names with events on', async () => {
    const q = await redis.queue({ events: true });
    await q.addBulk(
      Array.from({ length: 3 }, (_, i) => ({ body: i, options: { group: 7, name: `n${i}` } })),
    );
    const jobs = await claimAtLeast(q, 7, 3);
    const reports = new Map(
      jobs.map((job, i) => [job, { progress: String(i * 10), logged: 1, lines: [`l${i}`] }]),
    );
    const before = await redis.plain.xlen(keyOf(q.config.prefix, 7, 'fin'));
    expect(await q.sendReports(7, reports)).toEqual({ reported: 3, refused: [] });
    expect(await redis.plain.xlen(keyOf(q.config.prefix, 7, 'fin'))).toBe(before + 1);
    const events: QueueEvent[] = [];
    for await (const event of q.events({ groups: [7], from: 'start', follow: false })) {
      if (event.type === 'progress') events.push(event);
    }
    expect(events.map((e) => [e.id, e.name, e.progress])).toEqual(
      jobs.map((job, i) => [job.id, job.name, i * 10]),
    );
  });
});

describe('progress and log lines on a 3-master cluster', () => {
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it('live in each group’s slot, on its master, and go with the record there', async () => {
    const q = new Queue({ cluster: cluster.nodes, prefix: freshPrefix('rc'), keepDone: false });
    const plain = plainClient({ cluster: cluster.nodes });
    await q.ready();
    try {
      const ids = await q.addBulk(
        Array.from({ length: 10 }, (_, g) => ({ body: g, options: { group: g } })),
      );
      const jobs: Message[] = [];
      for (let g = 0; g < 10; g++) jobs.push(...(await claimAtLeast(q, g, 1)));
      for (const job of jobs) {
        expect(await q.progress(job, { group: job.group })).toBe(true);
        expect(await q.log(job, `in group ${job.group}`)).toBe(true);
      }
      for (const [g, id] of ids.entries()) {
        expect(await q.get(id)).toMatchObject({ progress: { group: g }, logs: [`in group ${g}`] });
      }
      await q.ack(jobs);
      for (const [g, id] of ids.entries()) {
        expect(await plain.exists(`{${q.config.prefix}:${g}}:log:${id}`)).toBe(0);
        expect(await plain.exists(keyOf(q.config.prefix, g, 'progress'))).toBe(0);
      }
    } finally {
      plain.disconnect();
      await q.close();
    }
  }, 60_000);
});
