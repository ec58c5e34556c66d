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

/** Every waiting or leased occurrence of every schedule, by schedule id, each by due time. */
export async function allOccurrences(
  client: Redis | Cluster,
  queue: Queue,
): Promise<Map<string, Occurrence[]>> {
  const { prefix, groups } = queue.config;
  const reads = await Promise.all(
    Array.from({ length: groups }, (_, group) =>
      Promise.all([
        client.zrange(keyOf(prefix, group, 'delayed'), 0, -1),
        client.hgetall(keyOf(prefix, group, 'due')),
      ]),
    ),
  );
  const out = new Map<string, Occurrence[]>();
  const note = (group: number, member: string, state: Occurrence['state']) => {
    const match = /^schedule:(.*):(\d+)$/.exec(member);
    if (!match) return;
    const list = out.get(match[1] as string) ?? [];
    list.push({ group, at: Number(match[2]), state });
    out.set(match[1] as string, list);
  };
  reads.forEach(([delayed, due], group) => {
    for (const member of delayed) note(group, member, 'waiting');
    for (const [member, value] of Object.entries(due)) {
      note(group, member, value.includes('/') ? 'leased' : 'waiting');
    }
  });
  for (const list of out.values()) list.sort((a, b) => a.at - b.at);
  return out;
}

/** Every waiting or leased occurrence of schedule `id` in every group, by due time. */
export async function occurrencesOf(
  client: Redis | Cluster,
  queue: Queue,
  id: string,
): Promise<Occurrence[]> {
  return (await allOccurrences(client, queue)).get(id) ?? [];
}

/** What a claim would hand a consumer for occurrence `at` of schedule `id` in `group`. */
export function occurrenceMessage(id: string, group: number, at: number): Message {
  return {
    id: `schedule:${id}:${at}`,
    group,
    schedule: { id, at },
  } as unknown as Message;
}
