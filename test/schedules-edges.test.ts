/**
 * Schedules at their edges (issue 24, items 1.1 and 1.2), on the real scripts with a clock the
 * test sets. An id names one schedule in the whole queue: a change of group or key is refused
 * in one line (before, upsert made a second schedule in the new group and both ran), an upsert
 * that names no group keeps the schedule where it is, two upserters creating one id in two
 * groups at once leave one, and remove removes it wherever it is. A change that keeps the
 * interval keeps the grid (before, any change restarted it at the moment of the change: an
 * hourly schedule whose body changed ran again 1 s after its last run); a new interval puts no
 * two occurrences closer than the smaller of the two.
 */
import { describe, expect, it } from 'vitest';
import { hashString } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { redisNow, useQueueRedis } from './helpers/queue.js';
import { clockedSchedules, occurrenceMessage, occurrencesOf } from './helpers/schedules.js';

const redis = useQueueRedis();
/** Far ahead of Redis's clock: no occurrence is ever due, so only the test moves them. */
const T0 = Date.UTC(2031, 0, 1);
const HOUR = 3_600_000;
const home = (id: string, groups: number) => hashString(`schedule:${id}`) % groups;

describe('an id names one schedule', () => {
  it('refuses a change of group or key in one line; without a group it stays; remove finds it', async () => {
    const queue = await redis.queue({ groups: 4 });
    const { schedules } = clockedSchedules(queue, T0);
    const away = (home('moved', 4) + 1) % 4; // not the group an id without group goes to
    const other = (away + 1) % 4;
    const made = await schedules.upsert('moved', { every: '1h', group: away });
    expect(made.group).toBe(away);
    await expect(schedules.upsert('moved', { every: '1h', group: other })).rejects.toThrow(
      `group: schedule moved lives in group ${away}; to move it, remove it and upsert it again (got ${other})`,
    );
    const key = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'].find((k) => hashString(k) % 4 === other);
    await expect(schedules.upsert('moved', { every: '1h', key })).rejects.toThrow(
      `key: schedule moved lives in group ${away};`,
    );
    // What `skyq schedules upsert moved --every 1h --body changed` does: no --group.
    const kept = await schedules.upsert('moved', { every: '1h', body: 'changed' });
    expect(kept.group).toBe(away);
    expect((await schedules.list()).map((s) => [s.id, s.group])).toEqual([['moved', away]]);
    expect((await schedules.get('moved'))?.group).toBe(away);
    expect(await occurrencesOf(redis.plain, queue, 'moved')).toEqual([
      { group: away, at: T0, state: 'waiting' },
    ]);
    expect(await schedules.remove('moved')).toBe(true);
    expect(await schedules.list()).toEqual([]);
    expect(await occurrencesOf(redis.plain, queue, 'moved')).toEqual([]);
    expect(await schedules.remove('moved')).toBe(false);
    // Moved the way the refusal says: removed, then upserted in the other group.
    expect((await schedules.upsert('moved', { every: '1h', group: other })).group).toBe(other);
    expect((await schedules.list()).map((s) => s.group)).toEqual([other]);
  });

  it('two upserters creating one id in two groups at once: one schedule, one refusal', async () => {
    const first = await redis.queue({ groups: 4 });
    const second = new Queue({ ...redis.target, prefix: first.config.prefix, groups: 4 });
    try {
      const a = clockedSchedules(first, T0).schedules;
      const b = clockedSchedules(second, T0).schedules;
      for (let i = 0; i < 20; i++) {
        const id = `race${i}`;
        const settled = await Promise.allSettled([
          a.upsert(id, { every: '1h', group: 1 }),
          b.upsert(id, { every: '1h', group: 2 }),
        ]);
        const made = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
        expect(made).toHaveLength(1);
        expect(String(refused[0])).toMatch(`schedule ${id} lives in group ${made[0]?.group}`);
        const occurrences = await occurrencesOf(redis.plain, first, id);
        expect(occurrences.map((o) => o.group)).toEqual([made[0]?.group]);
      }
      expect(await a.list()).toHaveLength(20);
    } finally {
      await second.close();
    }
  });

  it('a schedule from before placements (format 7): found, kept where it is, removed', async () => {
    const queue = await redis.queue({ groups: 4 });
    const { schedules } = clockedSchedules(queue, T0);
    const away = (home('old', 4) + 1) % 4;
    await schedules.upsert('old', { every: '1h', group: away });
    // What format 7 wrote: the state without a generation, and no marker in the home group.
    const hashOf = (g: number) => `{${queue.config.prefix}:${g}}:schedules`;
    await redis.plain.hdel(hashOf(home('old', 4)), 'g:old');
    const state = JSON.parse((await redis.plain.hget(hashOf(away), 's:old')) as string);
    delete state.gen;
    await redis.plain.hset(hashOf(away), 's:old', JSON.stringify(state));
    expect((await schedules.get('old'))?.group).toBe(away);
    expect((await schedules.upsert('old', { every: '1h', body: 'new' })).group).toBe(away);
    await expect(schedules.upsert('old', { every: '1h', group: home('old', 4) })).rejects.toThrow(
      `lives in group ${away}`,
    );
    expect((await schedules.list()).map((s) => s.group)).toEqual([away]);
    expect(await occurrencesOf(redis.plain, queue, 'old')).toHaveLength(1);
    expect(await schedules.remove('old')).toBe(true);
    expect(await schedules.list()).toEqual([]);
  });
});

describe('a change keeps the grid, or starts one no closer than the smaller interval', () => {
  it('body, then interval: 1 h → 10 min → 2 h', async () => {
    const queue = await redis.queue({ groups: 2 });
    const { schedules, clock } = clockedSchedules(queue, T0);
    const made = await schedules.upsert('hourly', { every: '1h', body: 'a' });
    expect(made.next).toBe(T0);
    // Its consumer runs T0 at T0 (and acks it).
    const ran = await schedules.advance(occurrenceMessage('hourly', made.group, T0));
    expect(ran.outcome).toBe('advanced');
    await queue.cancel(`schedule:hourly:${T0}`);
    clock.now = T0 + 1000;
    const body = await schedules.upsert('hourly', { every: '1h', body: 'b' });
    expect(body.next).toBe(T0 + HOUR); // the grid is kept (it was T0 + 1 s)
    expect(body.anchor).toBe(T0);
    clock.now = T0 + 2000;
    const shorter = await schedules.upsert('hourly', { every: '10m', body: 'b' });
    expect(shorter.next).toBe(T0 + 600_000); // 10 min after the last run, not at once
    clock.now = T0 + 3000;
    const longer = await schedules.upsert('hourly', { every: '2h', body: 'b' });
    expect(longer.next).toBe(T0 + 600_000); // min(10 min, 2 h) after the last run
    expect(await schedules.preview('hourly', { count: 3 })).toEqual([
      T0 + 600_000,
      T0 + 600_000 + 2 * HOUR,
      T0 + 600_000 + 4 * HOUR,
    ]);
    expect(await occurrencesOf(redis.plain, queue, 'hourly')).toEqual([
      { group: made.group, at: T0 + 600_000, state: 'waiting' },
    ]);
  });

  it('during downtime: the late occurrence keeps its time and the grid goes on from it', async () => {
    const queue = await redis.queue({ groups: 2 });
    const { schedules, clock } = clockedSchedules(queue, T0);
    const made = await schedules.upsert('late', { every: '1h', body: 'a' });
    clock.now = T0 + 600_000; // no consumer ran for 10 min
    const changed = await schedules.upsert('late', { every: '1h', body: 'b' });
    expect(changed.next).toBe(T0); // not T0 + 10 min: the grid is T0 + n h
    // It runs as soon as a consumer takes it (the catch-up), then on the grid.
    expect(await schedules.preview('late', { count: 2 })).toEqual([T0, T0 + HOUR]);
    await schedules.advance(occurrenceMessage('late', made.group, T0));
    expect((await schedules.get('late'))?.next).toBe(T0 + HOUR);
  });

  it('while an occurrence is leased: the new grid follows it; its consumer finds it stale', async () => {
    const queue = await redis.queue({ groups: 1 });
    // A clock behind Redis's: every occurrence is due at once, so a claim leases it.
    const start = (await redisNow(redis.plain)) - 10 * 60_000;
    const { schedules, clock } = clockedSchedules(queue, start);
    await schedules.upsert('minutely', { every: '1m', body: 'a' });
    const [leased] = await queue.claim(0, 10, 60_000);
    expect(leased?.schedule).toEqual({ id: 'minutely', at: start });
    clock.now = start + 5000;
    const body = await schedules.upsert('minutely', { every: '1m', body: 'b' });
    expect(body.next).toBe(start + 60_000); // not start + 5 s beside the one running
    clock.now = start + 6000;
    const shorter = await schedules.upsert('minutely', { every: '30s', body: 'b' });
    expect(shorter.next).toBe(start + 30_000);
    expect(shorter).toMatchObject({ last: start, count: 1 }); // the leased one counts as got
    const advance = await schedules.advance(leased as never);
    expect(advance).toEqual({ run: true, outcome: 'stale' });
    expect(await occurrencesOf(redis.plain, queue, 'minutely')).toEqual([
      { group: 0, at: start, state: 'leased' },
      { group: 0, at: start + 30_000, state: 'waiting' },
    ]);
  });
});
