/**
 * targets.js's `foreign` section: issue 18's guarantees include the latency of members other
 * programs add with a plain ZADD (no skyq producer, no wake-up token) to idle actors, with the
 * server's default of no keyspace notifications, so the launcher's watcher (every 50 ms) is what
 * finds them. Its targets follow from that interval: a member due ahead is leased with the
 * watcher's next look and started on time; an overdue one waits for that look plus a claim.
 */
import { measureForeign } from './foreign-latency.js';
import type { TargetRow } from './target-table.js';

const WATCH_MS = 50;

export async function foreignSection(sizes: { actorNice?: number }) {
  const nice = sizes.actorNice === undefined ? {} : { actorNice: sizes.actorNice };
  const base = { mode: 'off' as const, count: 100, everyMs: 50, ...nice };
  const ahead = await measureForeign({ ...base, aheadMs: 300 });
  const overdue = await measureForeign({ ...base, aheadMs: 0 });
  const s = 'foreign';
  const rows: TargetRow[] = [];
  for (const [label, r, p99] of [
    ['due 300 ms after the ZADD', ahead, 20],
    ['overdue when added', overdue, 2 * WATCH_MS],
  ] as const) {
    rows.push(
      {
        section: s,
        figure: `raw ZADD, ${label}: p99`,
        measured: r.p99,
        unit: 'ms',
        target: { atMost: p99 },
      },
      {
        section: s,
        figure: `raw ZADD, ${label}: lost`,
        measured: r.lost,
        unit: '',
        target: { atMost: 0 },
      },
      {
        section: s,
        figure: `raw ZADD, ${label}: early`,
        measured: r.early.count,
        unit: '',
        target: { atMost: 0 },
      },
    );
  }
  return { rows, results: { ahead, overdue } };
}
