// The depths of every group (counts.lua), for stats, /metrics and the dashboard. A group that
// cannot be read says why; the others are unaffected.
import type { QueueConfig } from './config.js';

/** One group's depths, as `queue.counts()` reads them. */
export interface GroupCounts {
  /** the group */
  group: number;
  /** waiting for their due time */
  delayed: number;
  /** due, waiting for a consumer */
  ready: number;
  /** leased to a consumer */
  active: number;
  /** dead letters */
  dead: number;
  /** paused: consumers lease nothing from it until resume() */
  paused: boolean;
  /** set when this group could not be read (a key of the wrong type, …); the figures are 0 */
  error?: string;
}

type RunCounts = (group: number, args: (string | number)[]) => Promise<unknown>;

export function groupCounts(
  config: QueueConfig,
  run: RunCounts,
  closed: () => boolean,
): Promise<GroupCounts[]> {
  return Promise.all(
    Array.from({ length: config.groups }, async (_, group): Promise<GroupCounts> => {
      try {
        const [delayed, ready, active, dead, paused] = (await run(group, [
          config.unitMs,
        ])) as number[];
        return { group, delayed, ready, active, dead, paused: paused === 1 } as GroupCounts;
      } catch (error) {
        if (closed()) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        return { group, delayed: 0, ready: 0, active: 0, dead: 0, paused: false, error: reason };
      }
    }),
  );
}
