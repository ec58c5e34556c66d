/**
 * Periodic schedules (queue.schedules): each occurrence is an ordinary message handled exactly
 * once with three launchers and five upserters at once; an upsert replaces the pending
 * occurrence (every → cron) and remove ends it; downtime gives one catch-up ('once') or none
 * ('skip'); the Europe/Berlin DST days, on a clock the test controls.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { firstOccurrence, occurrenceAfter, step } from '../src/queue/schedules/next.js';
import { actorLogFile } from '../src/runtime/log-names.js';
import { startActors } from '../src/start.js';
import { httpLauncher, postJson } from './helpers/http.js';
import { fixture, recorded, runCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** The grid ms of each recorded occurrence id (schedule:<id>:<at>), per schedule id. */
function occurrences(ids: string[], id: string): number[] {
  return ids
    .filter((x) => x.startsWith(`schedule:${id}:`))
    .map((x) => Number(x.slice(`schedule:${id}:`.length)));
}

describe('schedules: due times (a clock the test controls)', () => {
  const berlin = {
    cron: '30 2 * * *',
    tz: 'Europe/Berlin',
    anchor: 0,
    missed: 'once' as const,
  };
  const chain = (from: string, days: number) => {
    const out: string[] = [];
    let at = firstOccurrence(berlin, Date.parse(from)) as number;
    for (let i = 0; i < days; i++) {
      out.push(new Date(at).toISOString());
      // The consumer of each occurrence computes the next one at that very time.
      at = step(berlin, at, at + 5).next as number;
    }
    return out;
  };

  it('runs once on the day clocks skip 02:00–03:00 (at 03:00), once on the day they repeat it', () => {
    expect(chain('2026-03-27T00:00:00Z', 4)).toEqual([
      '2026-03-27T01:30:00.000Z', // 02:30 CET
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, once
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
    expect(chain('2026-10-24T00:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // the first 02:30; the second (01:30Z, CET) does not run
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
  });

  it('after downtime: once → this one runs and the next is on the grid after now; skip → let go', () => {
    const every = { every: 1000, anchor: 0, tz: 'UTC' };
    expect(step({ ...every, missed: 'once' }, 5000, 5003)).toEqual({ run: true, next: 6000 });
    expect(step({ ...every, missed: 'once' }, 5000, 15_500)).toEqual({
      run: true,
      next: 16_000,
      missed: true,
    });
    expect(step({ ...every, missed: 'skip' }, 5000, 15_500)).toEqual({
      run: false,
      next: 16_000,
      missed: true,
    });
    expect(occurrenceAfter({ ...every, endAt: 7000 }, 7000)).toBeNull();
    expect(firstOccurrence({ ...every, startAt: 9000, anchor: 9000 }, 100)).toBe(9000);
  });
});

describe('schedules on Redis', () => {
  it('three launchers, five upserters, one 500 ms schedule: each occurrence handled once over 10 s', async () => {
    const where = { redis: redis.server.url, prefix: 'sched3', groups: 2 };
    // 20 occurrences, each raced by three launchers and about 40 upserts a second: as many as a
    // 1 s schedule over 20 s, in half the time.
    const spec = { every: 500, body: { list: 'sched3', stamp: true }, name: 'tick' } as const;
    const upserters = Array.from({ length: 5 }, () => new Queue(where));
    const launchers = await Promise.all(
      [0, 1, 2].map(() =>
        startActors({ ...where, logDir: tempDir(), handler: fixture('record.mjs') }),
      ),
    );
    let upserting = true;
    const upserts = upserters.map(async (queue) => {
      let calls = 0;
      while (upserting) {
        await queue.schedules.upsert('tick', spec);
        calls++;
        await sleep(100 + Math.random() * 200);
      }
      return calls;
    });
    try {
      await sleep(10_000);
      upserting = false;
      const calls = (await Promise.all(upserts)).reduce((a, b) => a + b, 0);
      expect(calls).toBeGreaterThan(100);
      await upserters[0]?.schedules.remove('tick');
      await waitFor('the occurrences leased before the remove handled', async () => {
        const counts = await upserters[0]?.counts();
        return counts?.every((c) => c.delayed + c.ready + c.active === 0) ? true : undefined;
      });
      const ids = await recorded(redis.client, 'sched3');
      const ats = occurrences(ids, 'tick');
      expect(new Set(ids).size).toBe(ids.length); // no occurrence twice
      // None skipped, unless the one before was held past the skipped one's time: on a loaded
      // machine that is a consumer late by a whole interval, which runs as `missed` says.
      const started = await redis.client.hgetall('sched3:started');
      const sorted = [...ats].sort((a, b) => a - b);
      for (let i = 1; i < sorted.length; i++) {
        const at = sorted[i - 1] as number;
        const gap = (sorted[i] as number) - at;
        const late = Number(started[`schedule:tick:${at}`]) - at;
        expect({ at, late, gap }).toEqual({
          at,
          late,
          gap: gap === 1000 && late >= 500 ? 1000 : 500,
        });
      }
      expect(ats.length).toBeGreaterThanOrEqual(18);
      expect(ats.length).toBeLessThanOrEqual(21);
    } finally {
      upserting = false;
      await Promise.all(launchers.map((l) => l.stop()));
      await Promise.all(upserters.map((q) => q.close()));
    }
  }, 60_000);

  it('an upsert from every to cron replaces the pending occurrence; remove ends it', async () => {
    const where = { redis: redis.server.url, prefix: 'schedchg', groups: 2 };
    const queue = new Queue(where);
    const launcher = await startActors({
      ...where,
      logDir: tempDir(),
      handler: fixture('record.mjs'),
    });
    const pendingOccurrences = async () =>
      (await queue.counts()).reduce((sum, c) => sum + c.delayed + c.ready, 0);
    try {
      const first = await queue.schedules.upsert('job', { every: 700, body: { list: 'schedchg' } });
      expect(first).toMatchObject({ id: 'job', every: 700, count: 0 });
      expect(first.next).toBeTypeOf('number');
      await waitFor('two runs', async () =>
        (await redis.client.llen('schedchg')) >= 2 ? true : undefined,
      );
      const changed = await queue.schedules.upsert('job', {
        cron: '*/3 * * * * *',
        body: { list: 'schedchg' },
      });
      expect(changed.cron).toBe('*/3 * * * * *');
      expect((changed.next as number) % 3000).toBe(0);
      expect(changed.count).toBeGreaterThanOrEqual(2);
      expect(await pendingOccurrences()).toBe(1);
      const before = (await recorded(redis.client, 'schedchg')).length;
      await waitFor('two runs on the cron grid', async () =>
        (await redis.client.llen('schedchg')) >= before + 2 ? true : undefined,
      );
      const cronAts = occurrences(await recorded(redis.client, 'schedchg'), 'job').slice(before);
      for (const at of cronAts) expect(at % 3000).toBe(0);
      expect((await queue.schedules.list()).map((s) => s.id)).toEqual(['job']);
      expect(await queue.schedules.remove('job')).toBe(true);
      expect(await queue.schedules.remove('job')).toBe(false);
      expect(await queue.schedules.get('job')).toBeNull();
      expect(await pendingOccurrences()).toBe(0);
      const after = (await recorded(redis.client, 'schedchg')).length;
      await sleep(3500);
      expect((await recorded(redis.client, 'schedchg')).length).toBeLessThanOrEqual(after + 1);
      expect(await pendingOccurrences()).toBe(0);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 30_000);

  it('after 4 s with no launcher: once runs one catch-up, skip none; both go on on the grid', async () => {
    const where = { redis: redis.server.url, prefix: 'schedmiss', groups: 2 };
    const queue = new Queue(where);
    const options = { ...where, logDir: tempDir(), handler: fixture('record.mjs') };
    await queue.schedules.upsert('once', { every: '1s', body: { list: 'schedmiss' } });
    await queue.schedules.upsert('skip', {
      every: '1s',
      body: { list: 'schedmiss' },
      missed: 'skip',
    });
    try {
      let launcher = await startActors(options);
      await waitFor('both running', async () => {
        const ids = await recorded(redis.client, 'schedmiss');
        return occurrences(ids, 'once').length > 0 && occurrences(ids, 'skip').length > 0
          ? true
          : undefined;
      });
      await launcher.stop();
      const before = await recorded(redis.client, 'schedmiss');
      await sleep(4000); // four occurrences of each missed
      const restartedAt = Date.now();
      launcher = await startActors(options);
      const afterRestart = (ids: string[], id: string) =>
        occurrences(ids, id).filter((at) => at >= restartedAt - 100);
      // Once each ran on the grid after the restart, any catch-up has run too (it runs at once).
      await waitFor('both on the grid again', async () => {
        const ids = (await recorded(redis.client, 'schedmiss')).slice(before.length);
        return afterRestart(ids, 'once').length > 0 && afterRestart(ids, 'skip').length > 0
          ? true
          : undefined;
      });
      await launcher.stop();
      const ranFor = Date.now() - restartedAt;
      const all = await recorded(redis.client, 'schedmiss');
      const later = all.slice(before.length);
      // Run after the restart for a time before it: newer than the last run before the stop (a
      // stop that drained for a second on a loaded machine leaves one due during the drain).
      const inGap = (id: string) => {
        const lastBefore = Math.max(...occurrences(before, id));
        return occurrences(later, id).filter((at) => at > lastBefore && at < restartedAt - 100);
      };
      expect(inGap('once')).toHaveLength(1);
      expect(inGap('skip')).toHaveLength(0);
      for (const id of ['once', 'skip']) {
        const after = afterRestart(later, id);
        // On the grid: no more than one a second for as long as it ran (a loaded machine
        // stretches that; a flood of catch-ups would not fit).
        expect(after.length).toBeGreaterThanOrEqual(1);
        expect(after.length).toBeLessThanOrEqual(Math.ceil(ranFor / 1000) + 1);
      }
      expect(new Set(all).size).toBe(all.length);
      // Each actor log says what became of the missed occurrences: the catch-up, and the
      // skipped one. Neither is silent. (A consumer a whole second late on a loaded machine
      // counts as missed too and logs one more line of the same kind.)
      const events = [0, 1].flatMap((group) => {
        const file = actorLogFile(options.logDir, group);
        if (!existsSync(file)) return [];
        return readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { event?: string; schedule?: string })
          .filter((line) => line.event === 'catch-up' || line.event === 'skipped')
          .map((line) => `${line.event} ${line.schedule}`);
      });
      expect([...new Set(events)].sort()).toEqual(['catch-up once', 'skipped skip']);
    } finally {
      await queue.close();
    }
  }, 40_000);

  it('skyq schedules upsert | list | remove, and the dashboard lists and removes one', async () => {
    const flags = ['--redis', redis.server.url, '--prefix', 'schedcli', '--groups', '2'];
    const upsert = await runCli([
      'schedules',
      'upsert',
      'nightly',
      ...flags,
      '--cron',
      '0 3 * * *',
      '--tz',
      'Europe/Berlin',
      '--body',
      'monthly figures',
      '--name',
      'report.build',
    ]);
    expect(upsert.stderr).toBe('');
    expect(upsert.stdout).toMatch(
      /nightly .*cron "0 3 \* \* \*" Europe\/Berlin +report\.build +20\d\d-/,
    );
    const bad = await runCli([
      'schedules',
      'upsert',
      'x',
      ...flags,
      '--cron',
      '0 3 * * *',
      '--tz',
      'Mars/Base',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.split('\n')[0]).toBe(
      'skyq: tz: is not an IANA time zone (such as Europe/Berlin) (got "Mars/Base")',
    );
    const both = await runCli([
      'schedules',
      'upsert',
      'x',
      ...flags,
      '--cron',
      '* * * * *',
      '--every',
      '1s',
    ]);
    expect(both.stderr).toContain('every: give exactly one of every and cron');
    expect((await runCli(['schedules', 'list', ...flags])).stdout).toMatch(/^nightly +\d/m);
    const { launcher, url } = await httpLauncher(redis.server.url, { prefix: 'schedcli' });
    try {
      const listed = (await (await fetch(new URL('/api/schedules', url))).json()) as {
        schedules: { id: string; next: number; name: string }[];
      };
      expect(listed.schedules).toMatchObject([{ id: 'nightly', name: 'report.build' }]);
      const removed = await postJson(url, '/api/schedules/nightly/remove', {});
      expect(await removed.json()).toEqual({ removed: true });
    } finally {
      await launcher.stop();
    }
    const gone = await runCli(['schedules', 'remove', 'nightly', ...flags]);
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim()).toBe('skyq: no schedule nightly');
    // The first line names the Redis it read, as every read command's does.
    expect((await runCli(['schedules', 'list', ...flags])).stdout.trim().split('\n')).toEqual([
      `reading ${redis.server.url}`,
      'no schedules',
    ]);
  }, 40_000);
});
