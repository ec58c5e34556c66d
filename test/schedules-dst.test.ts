/**
 * Cron schedules on DST days (issue 24, item 1.3), read through queue.schedules.preview: no
 * wall-clock time runs twice on a fall-back day, and the times a spring-forward day skips run
 * once, together, right after the jump (a daily job still runs that day). Europe/Berlin and
 * America/New_York (one hour) and Australia/Lord_Howe (30 minutes), on both change days of
 * 2027, with single, list, range and step fields, and 6-field patterns. Before the fix croner's
 * own rule applied: `0,30 2 * * *` in Berlin ran 4 times on 31 Oct 2027 and not at all on 28 Mar.
 */
import { describe, expect, it } from 'vitest';
import type { Queue } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

/** An instant as its zone's wall clock reads it, with the offset: "2027-10-31 02:30 +02:00". */
function wall(tz: string, at: number): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const seconds = parts.second === '00' ? '' : `:${parts.second}`;
  const offset = (parts.timeZoneName as string).replace('GMT', '') || '+00:00';
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}${seconds} ${offset}`;
}

let queue: Queue;
async function runs(cron: string, tz: string, from: string, count: number): Promise<string[]> {
  queue ??= await redis.queue();
  const times = await queue.schedules.preview({ cron, tz }, { from: Date.parse(from), count });
  expect(new Set(times).size).toBe(times.length);
  for (let i = 1; i < times.length; i++)
    expect(times[i] as number).toBeGreaterThan(times[i - 1] as number);
  return times.map((at) => wall(tz, at));
}

describe('Europe/Berlin: 28 Mar 2027 skips 02:00–03:00, 31 Oct 2027 repeats it', () => {
  const tz = 'Europe/Berlin';
  it('a single time: runs at 03:00 on the spring day, once on the autumn day', async () => {
    expect(await runs('30 2 * * *', tz, '2027-03-27T00:00:00Z', 3)).toEqual([
      '2027-03-27 02:30 +01:00',
      '2027-03-28 03:00 +02:00',
      '2027-03-29 02:30 +02:00',
    ]);
    expect(await runs('30 2 * * *', tz, '2027-10-30T00:00:00Z', 3)).toEqual([
      '2027-10-30 02:30 +02:00',
      '2027-10-31 02:30 +02:00',
      '2027-11-01 02:30 +01:00',
    ]);
  });

  it('a list: the skipped times run once after the jump; the repeated ones once', async () => {
    expect(await runs('0,30 2 * * *', tz, '2027-03-28T00:00:00Z', 3)).toEqual([
      '2027-03-28 03:00 +02:00',
      '2027-03-29 02:00 +02:00',
      '2027-03-29 02:30 +02:00',
    ]);
    expect(await runs('0,30 2 * * *', tz, '2027-10-31T00:00:00Z', 3)).toEqual([
      '2027-10-31 02:00 +02:00',
      '2027-10-31 02:30 +02:00',
      '2027-11-01 02:00 +01:00',
    ]);
  });

  it('a range and a step: one run for the whole gap, none in the second pass', async () => {
    expect(await runs('0 1-3 * * *', tz, '2027-03-28T00:00:00Z', 3)).toEqual([
      '2027-03-28 01:00 +01:00',
      '2027-03-28 03:00 +02:00', // 02:00 (skipped) and 03:00 are one run
      '2027-03-29 01:00 +02:00',
    ]);
    expect(await runs('*/20 2 * * *', tz, '2027-10-30T23:00:00Z', 4)).toEqual([
      '2027-10-31 02:00 +02:00',
      '2027-10-31 02:20 +02:00',
      '2027-10-31 02:40 +02:00',
      '2027-11-01 02:00 +01:00',
    ]);
    expect(await runs('0 * * * *', tz, '2027-10-30T22:30:00Z', 4)).toEqual([
      '2027-10-31 01:00 +02:00',
      '2027-10-31 02:00 +02:00',
      '2027-10-31 03:00 +01:00', // 02:00 +01:00 ran as 02:00 +02:00
      '2027-10-31 04:00 +01:00',
    ]);
  });

  it('6 fields: seconds in the skipped hour run once after the jump', async () => {
    expect(await runs('*/15 0 2 * * *', tz, '2027-03-28T00:00:00Z', 2)).toEqual([
      '2027-03-28 03:00 +02:00',
      '2027-03-29 02:00 +02:00',
    ]);
    expect(await runs('*/20 0 2 * * *', tz, '2027-10-31T00:00:00Z', 4)).toEqual([
      '2027-10-31 02:00 +02:00',
      '2027-10-31 02:00:20 +02:00',
      '2027-10-31 02:00:40 +02:00',
      '2027-11-01 02:00 +01:00',
    ]);
  });

  it('from inside the repeated hour: what ran in its first pass does not run again', async () => {
    // 01:20Z is 02:20 +01:00, the second pass; 02:40 ran at 00:40Z.
    expect(await runs('*/20 2,3 * * *', tz, '2027-10-31T01:20:00Z', 2)).toEqual([
      '2027-10-31 03:00 +01:00',
      '2027-10-31 03:20 +01:00',
    ]);
  });
});

describe('America/New_York: 14 Mar 2027 skips 02:00–03:00, 7 Nov 2027 repeats 01:00–02:00', () => {
  const tz = 'America/New_York';
  it('lists and ranges on both days', async () => {
    expect(await runs('30 1,2 * * *', tz, '2027-03-14T00:00:00Z', 3)).toEqual([
      '2027-03-14 01:30 -05:00',
      '2027-03-14 03:00 -04:00',
      '2027-03-15 01:30 -04:00',
    ]);
    expect(await runs('30 1,2 * * *', tz, '2027-11-07T00:00:00Z', 3)).toEqual([
      '2027-11-07 01:30 -04:00',
      '2027-11-07 02:30 -05:00',
      '2027-11-08 01:30 -05:00',
    ]);
    expect(await runs('*/30 0-2 * * *', tz, '2027-11-07T04:00:00Z', 6)).toEqual([
      '2027-11-07 00:00 -04:00',
      '2027-11-07 00:30 -04:00',
      '2027-11-07 01:00 -04:00',
      '2027-11-07 01:30 -04:00',
      '2027-11-07 02:00 -05:00',
      '2027-11-07 02:30 -05:00',
    ]);
    expect(await runs('0 2 * * *', tz, '2027-03-13T12:00:00Z', 2)).toEqual([
      '2027-03-14 03:00 -04:00',
      '2027-03-15 02:00 -04:00',
    ]);
  });

  it('6 fields on both days', async () => {
    expect(await runs('0 0,45 2 * * *', tz, '2027-03-14T00:00:00Z', 2)).toEqual([
      '2027-03-14 03:00 -04:00',
      '2027-03-15 02:00 -04:00',
    ]);
    expect(await runs('30 59 1 * * *', tz, '2027-11-07T00:00:00Z', 2)).toEqual([
      '2027-11-07 01:59:30 -04:00',
      '2027-11-08 01:59:30 -05:00',
    ]);
  });
});

describe('Australia/Lord_Howe: 30-minute changes, 4 Apr 2027 (back) and 3 Oct 2027 (forward)', () => {
  const tz = 'Australia/Lord_Howe';
  it('the repeated half hour 01:30–02:00 runs once', async () => {
    expect(await runs('*/15 1 * * *', tz, '2027-04-03T12:00:00Z', 5)).toEqual([
      '2027-04-04 01:00 +11:00',
      '2027-04-04 01:15 +11:00',
      '2027-04-04 01:30 +11:00',
      '2027-04-04 01:45 +11:00',
      '2027-04-05 01:00 +10:30',
    ]);
    expect(await runs('0 15-45/15 1 * * *', tz, '2027-04-03T12:00:00Z', 4)).toEqual([
      '2027-04-04 01:15 +11:00',
      '2027-04-04 01:30 +11:00',
      '2027-04-04 01:45 +11:00',
      '2027-04-05 01:15 +10:30',
    ]);
  });

  it('the skipped half hour 02:00–02:30 runs once, at 02:30', async () => {
    expect(await runs('*/10 2 * * *', tz, '2027-10-02T12:00:00Z', 4)).toEqual([
      '2027-10-03 02:30 +11:00', // 02:00, 02:10, 02:20 (skipped) and 02:30 are one run
      '2027-10-03 02:40 +11:00',
      '2027-10-03 02:50 +11:00',
      '2027-10-04 02:00 +11:00',
    ]);
    expect(await runs('15 2 * * *', tz, '2027-10-02T12:00:00Z', 2)).toEqual([
      '2027-10-03 02:30 +11:00',
      '2027-10-04 02:15 +11:00',
    ]);
    expect(await runs('0 10 2 * * *', tz, '2027-10-02T12:00:00Z', 1)).toEqual([
      '2027-10-03 02:30 +11:00',
    ]);
  });
});
