/**
 * The fault files run one at a time: what they measure (recovery times, Redis time per call)
 * would suffer from a neighbour. The suite still runs two workers, so that the files that mostly
 * wait (beside.ts) go beside the others instead of adding their waits to the run. Every other
 * file takes this lock for its whole run (a setup file's hooks come before the file's own).
 *
 * The lock is a directory (mkdir is atomic) holding the holder's pid. A holder whose process
 * died without its afterAll (an out-of-memory kill) is taken over: its directory is renamed
 * away first, so two waiters that both saw it dead cannot remove each other's fresh lock.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect } from 'vitest';
import { processAlive } from '../../helpers/ports.js';
import { BESIDE } from './beside.js';
import { RESULTS_DIR } from './results.js';

const LOCK = join(RESULTS_DIR, '../one-at-a-time.lock');
/** Longer than any fault file runs: a wait past it is a holder that never let go. */
const WAIT_MS = 600_000;

const besideOthers = () => BESIDE.some((file) => expect.getState().testPath?.endsWith(file));

function holder(): number | null {
  // null when gone, or made a moment ago and its pid not written yet
  try {
    const pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

async function acquire(): Promise<void> {
  mkdirSync(join(LOCK, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = holder();
    if (pid !== null && !processAlive(pid)) {
      const stale = `${LOCK}.stale-${process.pid}`;
      try {
        renameSync(LOCK, stale);
        rmSync(stale, { recursive: true, force: true });
      } catch {
        // another waiter took it over first
      }
      continue;
    }
    await sleep(100);
  }
}

beforeAll(async () => {
  if (!besideOthers()) await acquire();
}, WAIT_MS);

afterAll(() => {
  if (!besideOthers() && holder() === process.pid) rmSync(LOCK, { recursive: true, force: true });
});
