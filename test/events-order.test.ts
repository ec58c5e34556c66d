// events({ follow: false }) and `skyq events` without --follow hand out what the streams keep in
// time order over all groups, not group by group (issue 24, 2.8): 3 groups of interleaved
// events, more than one read's worth a group, resumed from a cursor taken midway with no gap and
// no repeat. Real redis-server.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, type QueueEvent } from '../src/index.js';
import { runCli, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const PREFIX = 'evorder';
const GROUPS = 3;
/** More than one XRANGE chunk (50 entries) in each group. */
const ADDS = 3 * 70;
let queue: Queue;
let ids: string[];

beforeAll(async () => {
  queue = new Queue({ redis: redis.server.url, prefix: PREFIX, groups: GROUPS, events: true });
  ids = [];
  // One add a call: one stream entry each, round robin over the groups, a few ms apart.
  for (let i = 0; i < ADDS; i++) {
    ids.push(await queue.add(i, { group: i % GROUPS }));
    if (i % 7 === 6) await sleep(2);
  }
});
afterAll(async () => queue?.close());

async function collect(from: string): Promise<QueueEvent[]> {
  const events: QueueEvent[] = [];
  for await (const event of queue.events({ from, follow: false })) events.push(event);
  return events;
}

function expectTimeOrder(times: number[]): void {
  const back = times.findIndex((at, i) => i > 0 && at < (times[i - 1] as number));
  expect(back, `event ${back} goes back in time`).toBe(-1);
}

describe('events without follow', () => {
  it('are in time order over all groups, every one once', async () => {
    const events = await collect('start');
    expect(events.map((e) => e.id).sort()).toEqual([...ids].sort());
    expectTimeOrder(events.map((e) => e.at));
    // Interleaved as they were added (the order of one millisecond's entries of different
    // groups is not known: streams number their entries each on its own).
    expect(new Set(events.slice(0, 20).map((e) => e.group)).size).toBe(GROUPS);
  });

  it('resume from a cursor taken midway: the rest, in order, no gap and no repeat', async () => {
    const all = await collect('start');
    const cut = 100;
    const rest = await collect((all[cut - 1] as QueueEvent).cursor);
    expect(rest.map((e) => e.id)).toEqual(all.slice(cut).map((e) => e.id));
  });

  it('skyq events prints them in time order', async () => {
    const out = await runCli([
      'events',
      '--redis',
      redis.server.url,
      '--prefix',
      PREFIX,
      '--groups',
      '3',
    ]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n').slice(1);
    expect(lines).toHaveLength(ADDS);
    expectTimeOrder(lines.map((line) => Date.parse(line.split('  ')[0] as string)));
  });
});
