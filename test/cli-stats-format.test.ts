/**
 * `skyq stats` prints durations with units and sensible precision, as the dashboard does:
 * not "20.017/20.017/20.017" or "0.85/3000/3422.572".
 */
import { expect, it } from 'vitest';
import { formatMs } from '../src/cli/format-ms.js';
import { renderStats } from '../src/cli/stats-view.js';
import type { LauncherStats } from '../src/runtime/launcher-stats.js';

it('formats durations with a unit and one precision per unit', () => {
  expect(formatMs(0.85)).toBe('850 µs');
  expect(formatMs(20.017)).toBe('20.0 ms');
  expect(formatMs(3000)).toBe('3.0 s');
  expect(formatMs(3422.572)).toBe('3.4 s');
  expect(formatMs(90_000)).toBe('1.5 min');
  expect(formatMs(-12.34)).toBe('-12.3 ms');
  expect(formatMs(null)).toBe('-');
});

it('the stats table shows lateness and handler times that way', () => {
  const lateness = { count: 3, p50: 0.85, p99: 3000, max: 3422.572 };
  const launcher = {
    launcherId: 'l1',
    pid: 1,
    host: 'h',
    at: 10_000,
    startedAt: 0,
    servers: [],
    totals: {
      names: [{ name: 'email.send', done: 3, failed: 0, summary: { p50: 20.017, p99: 20.017 } }],
    },
    actors: [
      {
        group: 0,
        status: 'ok',
        restarts: 0,
        stat: {
          state: 'idle',
          claimed: 3,
          done: 3,
          failed: 0,
          retried: 0,
          dead: 0,
          inFlight: 0,
          summary: { lateness },
        },
      },
    ],
  } as unknown as LauncherStats;
  const text = renderStats({ groups: [], launchers: [launcher] }, 'task_group');
  expect(text).toContain('850 µs / 3.0 s / 3.4 s');
  expect(text).toContain('20.0 ms / 20.0 ms');
  expect(text).not.toMatch(/3422\.572|20\.017/);
});
