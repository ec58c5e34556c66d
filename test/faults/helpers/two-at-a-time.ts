/**
 * The fault files run two at a time, in two slots; a file named in ALONE (sharing.ts) holds both,
 * and one in BESIDE holds none. What the ALONE files measure (Redis time per call, a p99, a
 * recovery bound) would suffer from a neighbour; the others count ids. Each file takes its slots
 * for its whole run (a setup file's hooks come before the file's own).
 *
 * A slot is a directory (mkdir is atomic) holding its holder's pid, and `alone` when an ALONE
 * file holds it. An ALONE file takes slot 0, then waits for slot 1; a shared file seeing slot 0
 * held by one waits too instead of taking slot 1, so ALONE files are not passed by every shared
 * file that comes after them. Both take slots in the same order, so none waits on another in a
 * circle. A slot whose holder died without its afterAll (an out-of-memory kill) is taken over:
 * its directory is renamed away first, so two waiters that both saw it dead cannot remove each
 * other's fresh slot.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect } from 'vitest';
import { processAlive } from '../../helpers/ports.js';
import { RESULTS_DIR } from './results.js';
import { ALONE, BESIDE, listed } from './sharing.js';

const SLOTS = [0, 1].map((n) => join(RESULTS_DIR, `../fault-slot-${n}.lock`));
/** Longer than any two fault files run: a wait past it is a holder that never let go. */
const WAIT_MS = 600_000;

function holder(slot: string): number | null {
  // null when free, or made a moment ago and its pid not written yet
  try {
    const pid = Number(readFileSync(join(slot, 'pid'), 'utf8'));
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Takes the slot if it is free (or its holder died); false when another holds it. */
function tryTake(slot: string, alone: boolean): boolean {
  try {
    mkdirSync(slot);
    if (alone) writeFileSync(join(slot, 'alone'), '');
    writeFileSync(join(slot, 'pid'), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const pid = holder(slot);
  if (pid !== null && !processAlive(pid)) {
    const stale = `${slot}.stale-${process.pid}`;
    try {
      renameSync(slot, stale);
      rmSync(stale, { recursive: true, force: true });
    } catch {
      // another waiter took it over first
    }
  }
  return false;
}

async function takeSlots(alone: boolean): Promise<void> {
  mkdirSync(join(SLOTS[0] as string, '..'), { recursive: true });
  const [first, second] = SLOTS as [string, string];
  for (;;) {
    if (tryTake(first, alone)) break;
    if (!alone && !existsSync(join(first, 'alone')) && tryTake(second, false)) return;
    await sleep(100);
  }
  if (!alone) return;
  while (!tryTake(second, true)) await sleep(100);
}

const path = () => expect.getState().testPath;

beforeAll(async () => {
  if (!listed(BESIDE, path())) await takeSlots(listed(ALONE, path()));
}, WAIT_MS);

afterAll(() => {
  for (const slot of SLOTS) {
    if (holder(slot) === process.pid) rmSync(slot, { recursive: true, force: true });
  }
});
