// The bench's books (bench/tracker.ts): lost, duplicates and both lateness figures, including a
// start that comes before its add was acknowledged (bee-queue, BullMQ and the naive loop can
// start a job before addBulk returns), which counts from its due time, not from the ack.
import { describe, expect, it } from 'vitest';
import { RunTracker } from '../bench/tracker.js';
import { defaultWorkload } from '../bench/workloads.js';

const figures = { calls: 0, scriptCalls: 0, cpuSeconds: 0, usedMemory: 0 };

describe('RunTracker', () => {
  it('counts each id once, and a start before the ack from its due time', async () => {
    const tracker = new RunTracker({ ...defaultWorkload('burst'), count: 3, spreadMs: 0 });
    const batch = [
      { id: '0', delayMs: 0 },
      { id: '1', delayMs: 0 },
      { id: '2', delayMs: 0 },
    ];
    const [due] = tracker.adding(batch) as [number];
    tracker.handled('0', undefined, due + 40); // before the ack below: 40 ms from due
    tracker.handled('0', undefined, due + 45); // a duplicate
    tracker.handled('b7', undefined, due + 1); // never added
    // The ack comes 60 ms after due, 20 ms after '0' started.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due + 60 - Date.now())));
    tracker.added(batch);
    tracker.handled('1', undefined, Date.now()); // right after its ack
    const result = tracker.result('test', figures);
    expect(result).toMatchObject({ handled: 2, duplicates: 1, lost: 1 });
    expect(result.notes).toEqual(['1 handled ids were never added']);
    // From due: '0' 40 ms, '1' 60 ms or a little more. From max(due, added): '0' started
    // before its ack, so 40 from due (counted from the later ack it would read as 0 ms); '1'
    // right after its ack, a few ms at most.
    expect(result.lateness.max).toBeGreaterThanOrEqual(59);
    expect(result.latenessSinceAdded.max).toBeCloseTo(40, 0);
    expect(result.latenessSinceAdded.p50).toBeLessThan(20);
  });
});
