// Each actor looks after its group's schedules now and then: a schedule whose pending
// occurrence is gone without advancing it (a consumer leased it and died before starting it,
// and on its last attempt the lease expiry made it a dead letter; or it was cancelled) would
// otherwise never run again, since only a consumer starting an occurrence adds the next.
// The repair is a compare-and-set (schedules.repair): any number of actors may do it at once.
import type { Queue } from '../queue/queue.js';
import type { Logger } from './logger.js';

/**
 * One repair round of the group's schedules, for the actor's chores round (actor-rounds.ts):
 * a lost occurrence costs its schedule at most CHORES_MS. A round still out skips the next.
 */
export function scheduleRepair(queue: Queue, group: number, log: Logger): () => void {
  let running = false;
  return () => {
    if (running) return;
    running = true;
    queue.schedules
      .repair(group)
      .then((ids) => {
        for (const id of ids) {
          log.warn(
            { event: 'schedule-repaired', schedule: id },
            'schedule advanced: its pending occurrence was gone (dead-lettered before it started, or cancelled)',
          );
        }
      })
      // Redis away or the queue closing: the next round tries again.
      .catch(() => undefined)
      .finally(() => {
        running = false;
      });
  };
}
