/**
 * Schedules at the bounds of time and of what a caller may steer. Times a schedule keeps are
 * bounded as add's delay is (100 years): Redis's cjson keeps 14 significant digits, so an
 * `every: 1e15` came back from the stored state a few ms off and its `next` named no
 * occurrence (remove() left it waiting for good). A schedule's pending occurrence can be
 * brought forward (run now) but not pushed back: pushed past its grid time it held the whole
 * schedule back (the next occurrence is added when a consumer takes this one).
 */
import { describe, expect, it } from 'vitest';
import { redisNow, useQueueRedis } from './helpers/queue.js';
import { occurrencesOf } from './helpers/schedules.js';

const redis = useQueueRedis();
const CENTURY = 100 * 365 * 24 * 3_600_000;

describe('schedule times are bounded as a delay is (100 years)', () => {
  it('refuses every, startAt and endAt beyond it in one line naming the field', async () => {
    const queue = await redis.queue({ groups: 2 });
    const later = Date.now() + 2 * CENTURY;
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { every: 1e15 },
        /^every: must be at most 100 years \(3153600000000 ms\) \(got 1000000000000000\)$/,
      ],
      [{ every: '40000d' }, /^every: must be at most 100 years .*\(got "40000d"\)$/],
      [
        { every: '1h', startAt: later },
        /^startAt: must be at most 100 years from now \(got \d+\)$/,
      ],
      [{ every: '1h', endAt: new Date(later) }, /^endAt: must be at most 100 years from now/],
    ];
    for (const [spec, message] of cases) {
      const refused = await queue.schedules.upsert('far', spec as never).catch((e: Error) => e);
      expect(String((refused as Error).message), JSON.stringify(spec)).toMatch(message);
    }
    await expect(queue.schedules.preview({ every: 1e15 })).rejects.toThrow(/^every: must be/);
    expect(await queue.schedules.list()).toEqual([]);
  });

  it('at the bound, next names the occurrence and remove takes it away', async () => {
    const queue = await redis.queue({ groups: 2 });
    const now = await redisNow(redis.plain);
    const made = await queue.schedules.upsert('century', {
      every: CENTURY,
      startAt: now + CENTURY - 60_000,
    });
    expect(await occurrencesOf(redis.plain, queue, 'century')).toEqual([
      { group: made.group, at: made.next, state: 'waiting' },
    ]);
    expect(await queue.schedules.remove('century')).toBe(true);
    expect(await occurrencesOf(redis.plain, queue, 'century')).toEqual([]);
  });
});

describe("a schedule's pending occurrence can run sooner, not later", () => {
  it('refuses pushing it back in one line; run now works and the schedule goes on', async () => {
    const queue = await redis.queue({ groups: 2 });
    const startAt = (await redisNow(redis.plain)) + 600_000;
    const made = await queue.schedules.upsert('rsc', { every: '1h', startAt, body: 'tick' });
    const occ = `schedule:rsc:${made.next}`;
    const refusal =
      /^id: is schedule rsc's next occurrence, which can run sooner but not later: .*upsert .* \(got "schedule:rsc:\d+"\)$/;
    await expect(queue.reschedule(occ, { delay: '2h' })).rejects.toThrow(refusal);
    await expect(queue.reschedule(occ, { runAt: (made.next as number) + 1 })).rejects.toThrow(
      refusal,
    );
    expect((await queue.get(occ))?.dueAt).toBe(made.next); // untouched
    // Sooner is fine: the grid goes on from it when a consumer takes it.
    expect(await queue.reschedule(occ, { runAt: (made.next as number) - 60_000 })).toBe(true);
    expect(await queue.reschedule(occ, { delay: 0 })).toBe(true);
    const [taken] = await queue.claim(made.group, 10, 60_000);
    expect(taken?.id).toBe(occ);
    expect((await queue.schedules.advance(taken as never)).outcome).toBe('advanced');
    const following = (made.next as number) + 3_600_000;
    expect((await queue.schedules.get('rsc'))?.next).toBe(following);
    // A message that only looks like one (no such schedule, or not its next) moves as any does.
    const lookalike = await queue.add('x', { id: 'schedule:rsc:5', delay: 1000 });
    expect(await queue.reschedule(lookalike, { delay: '2h' })).toBe(true);
    await queue.schedules.remove('rsc');
    const other = await queue.add('x', { id: `schedule:rsc:${following}`, delay: 1000 });
    expect(await queue.reschedule(other, { delay: '2h' })).toBe(true);
  });
});
