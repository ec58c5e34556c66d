/**
 * The actor's start timer (src/runtime/start-timer.ts) on a fake clock: a message never starts
 * before its due time, and starts within a millisecond of it (or when added, if that is later).
 * Messages come as claims do: several added in one synchronous loop, in due order.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { StartTimer } from '../src/runtime/start-timer.js';
import { propertyParameters } from './helpers/property.js';

interface Item {
  id: number;
  dueAt: number;
  addedAt: number;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Adds each claim's items in one loop at its time; returns each item's start time. */
async function run(claims: { at: number; dues: number[] }[]) {
  const t0 = Date.now();
  const started = new Map<number, number>();
  const timer = new StartTimer<Item>(Date.now, (item, now) => {
    started.set(item.id, now);
  });
  let id = 0;
  const items: Item[] = [];
  for (const claim of [...claims].sort((a, b) => a.at - b.at)) {
    await vi.advanceTimersByTimeAsync(t0 + claim.at - Date.now());
    const now = Date.now();
    for (const due of [...claim.dues].sort((a, b) => a - b)) {
      const item = { id: id++, dueAt: t0 + due, addedAt: now };
      items.push(item);
      timer.add(item, now);
    }
  }
  await vi.advanceTimersByTimeAsync(10_000);
  return { items, started };
}

it('never starts early, nor more than 1 ms late', async () => {
  const claim = fc.record({
    at: fc.integer({ min: 0, max: 200 }),
    dues: fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 30 }),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(claim, { minLength: 1, maxLength: 6 }), async (claims) => {
      vi.setSystemTime(1_000_000);
      const { items, started } = await run(claims);
      for (const item of items) {
        const at = started.get(item.id);
        expect(at, `item due ${item.dueAt}`).toBeDefined();
        // Added after its due time, it starts when added.
        expect(at as number).toBeGreaterThanOrEqual(item.dueAt);
        expect(at as number).toBeLessThanOrEqual(Math.max(item.dueAt + 1, item.addedAt));
      }
    }),
    propertyParameters(200),
  );
});
