/**
 * Helpers for the schedule suites: a Schedules on a queue's real scripts with a clock the test
 * sets (the schedule scripts never read Redis's TIME: each caller passes its own now), the
 * occurrences a schedule has in Redis, and a consumer's part played by hand.
 */
import type { Cluster, Redis } from 'ioredis';
import { keyOf } from '../../src/base/keys.js';
import type { Message, Queue } from '../../src/index.js';
import { Schedules } from '../../src/queue/schedules/schedules.js';

export interface Clocked {
  schedules: Schedules;
  /** the time every call of `schedules` sees, ms; set it at will */
  clock: { now: number };
}

export function clockedSchedules(queue: Queue, start: number): Clocked {
  const clock = { now: start };
  const schedules = new Schedules({
    config: queue.config,
    run: (name, group, args, buffers) => queue.run(name, group, args, buffers),
    now: async () => clock.now,
  });
  return { schedules, clock };
}

export interface Occurrence {
  group: number;
  at: number;
  state: 'waiting' | 'leased';
}

/** Every waiting or leased occurrence of schedule `id` in every group, by due time. */
export async function occurrencesOf(
  client: Redis | Cluster,
  queue: Queue,
  id: string,
): Promise<Occurrence[]> {
  const { prefix, groups } = queue.config;
  const head = `schedule:${id}:`;
  const out: Occurrence[] = [];
  for (let group = 0; group < groups; group++) {
    const delayed = await client.zrange(keyOf(prefix, group, 'delayed'), 0, -1);
    const due = await client.hgetall(keyOf(prefix, group, 'due'));
    for (const member of delayed) {
      if (member.startsWith(head)) {
        out.push({ group, at: Number(member.slice(head.length)), state: 'waiting' });
      }
    }
    for (const [member, value] of Object.entries(due)) {
      if (!member.startsWith(head)) continue;
      const state = value.includes('/') ? 'leased' : 'waiting';
      out.push({ group, at: Number(member.slice(head.length)), state });
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** What a claim would hand a consumer for occurrence `at` of schedule `id` in `group`. */
export function occurrenceMessage(id: string, group: number, at: number): Message {
  return {
    id: `schedule:${id}:${at}`,
    group,
    schedule: { id, at },
  } as unknown as Message;
}
