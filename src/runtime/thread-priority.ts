// Actor threads yield the cores to the thread that started them. In the seed's shape (a
// producer adding in the same process as ten actors) the actors' wake-ups and claims otherwise
// take the cores from the producer, and in random due order a slow producer is what makes
// messages late: every second it spends adding is a second the messages it has not added yet
// wait. Linux keeps a nice value per thread, so raising it here touches this thread only.
import { getPriority, setPriority } from 'node:os';

/** How far an actor thread lowers its priority by default (nice steps, Linux only). */
export const DEFAULT_ACTOR_NICE = 10;
const LOWEST_PRIORITY = 19;

export interface PriorityOutcome {
  /** the thread's nice value after the call, or null where it was not changed */
  nice: number | null;
  /** why it was left alone; absent when it was lowered or 0 steps were asked */
  note?: string;
}

/**
 * Lowers the calling thread's scheduling priority by `steps` nice steps (capped at 19).
 * Elsewhere than Linux, setpriority(0) would lower the whole process, producer included, so it
 * is left alone there.
 */
export function lowerThreadPriority(steps: number): PriorityOutcome {
  if (steps === 0) return { nice: null };
  if (process.platform !== 'linux') {
    return { nice: null, note: `per-thread priority is Linux only (${process.platform})` };
  }
  try {
    const nice = Math.min(LOWEST_PRIORITY, getPriority(0) + steps);
    setPriority(0, nice);
    return { nice };
  } catch (error) {
    return { nice: null, note: error instanceof Error ? error.message : String(error) };
  }
}
