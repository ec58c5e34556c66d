// Actor threads yield the cores to the thread that started them. In the seed's shape (a
// producer adding in the same process as ten actors) the actors' wake-ups and claims otherwise
// take the cores from the producer, and in random due order a slow producer is what makes
// messages late: every second it spends adding is a second the messages it has not added yet
// wait. Linux keeps a nice value per thread, so raising it here touches this thread only.
//
// V8's helper threads go down with them. They compile and collect for every isolate of the
// process, and at the launcher's priority they took the cores from the niced actors whenever the
// ten isolates optimised the same code at once: some 200 ms of both cores, every message due
// then 40–100 ms late (a CLI producer's p99 of 35–69 ms, 10–20 with them lowered; in the
// seed's shape the producer gains too: docs/BENCHMARKS.md). Node names no thread, so the
// helpers are the threads that exist when this module is first evaluated on the main thread:
// Node starts them before any of the program's code runs (V8's workers, libuv's pool and the
// rest), and a worker the program starts later is not among them.
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/** How far an actor thread lowers its priority by default (nice steps, Linux only). */
export const DEFAULT_ACTOR_NICE = 10;
const LOWEST_PRIORITY = 19;

export interface PriorityOutcome {
  /** the thread's nice value after the call, or null where it was not changed */
  nice: number | null;
  /** why it was left alone; absent when it was lowered or 0 steps were asked */
  note?: string;
}

/** The nice value `steps` below the calling thread's, capped at 19 as the kernel caps it. */
const niceBelowCaller = (steps: number) => Math.min(LOWEST_PRIORITY, getPriority(0) + steps);

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
    const nice = niceBelowCaller(steps);
    setPriority(0, nice);
    return { nice };
  } catch (error) {
    return { nice: null, note: error instanceof Error ? error.message : String(error) };
  }
}

/** The threads Node started with the process, but for the main one (see the top). */
const helperThreads = process.platform === 'linux' && isMainThread ? readHelpers() : [];

function readHelpers(): number[] {
  try {
    return readdirSync('/proc/self/task')
      .map(Number)
      .filter((tid) => tid !== process.pid);
  } catch {
    return []; // no /proc: the helpers keep their priority
  }
}

/** What the launchers of this process lowered: each helper's nice before, while any runs. */
const lowered = new Map<number, number>();
let holders = 0;

/**
 * Lowers Node's helper threads to `steps` nice steps below the calling thread (the launcher's),
 * while any launcher of the process runs; the last one to stop puts them back, where the
 * process may raise priorities again (root, or RLIMIT_NICE: otherwise they stay lowered).
 * Returns what releases this launcher's hold.
 */
export function lowerHelperThreads(steps: number): () => void {
  if (steps === 0 || helperThreads.length === 0) return () => undefined;
  if (holders++ === 0) {
    const nice = niceBelowCaller(steps);
    for (const tid of helperThreads) {
      try {
        const before = getPriority(tid);
        if (before >= nice) continue;
        setPriority(tid, nice);
        lowered.set(tid, before);
      } catch {
        // the thread ended: nothing to lower
      }
    }
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders > 0) return;
    for (const [tid, before] of lowered) {
      try {
        setPriority(tid, before);
      } catch {
        // not allowed to raise a priority again, or the thread ended
      }
    }
    lowered.clear();
  };
}
