// What `skyq stats` prints: one table of group depths (a group that cannot be
// read is shown as broken with the reason, a paused one as paused), then each
// running launcher's actors.
import type { GroupCounts } from '../queue/queue.js';
import type { BucketState } from '../queue/ratelimit/buckets.js';
import { describeRate } from '../queue/ratelimit/spec.js';
import { EVICTION_FIX } from '../redis/eviction.js';
import type { LauncherStats } from '../runtime/launcher-stats.js';
import { SKEW_LIMIT_MS } from '../runtime/server-checks.js';
import { formatMsList, formatRate } from './format-ms.js';
import { printable, withoutScriptLocation } from './preview.js';
import { table } from './table.js';

export interface StatsSnapshot {
  groups: GroupCounts[];
  launchers: LauncherStats[];
  /** the rate-limit buckets launchers used lately (none: no limit in use) */
  limits?: BucketState[];
}

export function groupState(counts: GroupCounts): string {
  if (counts.error !== undefined)
    return `broken: ${printable(withoutScriptLocation(counts.error))}`;
  return counts.paused ? 'paused' : 'ok';
}

export function renderStats(
  { groups, launchers, limits = [] }: StatsSnapshot,
  prefix: string,
): string {
  const out: string[] = [
    table(
      ['group', 'delayed', 'ready', 'active', 'dead', 'state'],
      groups.map((c) => {
        const figures =
          c.error === undefined ? [c.delayed, c.ready, c.active, c.dead] : ['-', '-', '-', '-'];
        return [`${prefix}:${c.group}`, ...figures, groupState(c)];
      }),
      { leftAlignLast: true },
    ),
  ];
  const broken = groups.filter((c) => c.error !== undefined).length;
  if (broken > 0)
    out.push(
      `${broken} group(s) cannot be read: a key of theirs is not what skyq expects (see the state); the others are counted as usual`,
    );
  if (limits.length > 0) out.push('', rateTable(limits));
  out.push(...serverLines(launchers));
  if (launchers.length === 0) out.push('', 'no launcher running');
  for (const launcher of launchers) {
    const up = Math.round((launcher.at - launcher.startedAt) / 1000);
    out.push(
      '',
      `launcher ${launcher.launcherId} (pid ${launcher.pid} on ${launcher.host}, up ${up} s)`,
      table(
        [
          'actor',
          'state',
          'claimed',
          'done',
          'done/s',
          'failed',
          'retried',
          'dead',
          'in flight',
          'held back',
          'late p50 / p99 / max',
          'restarts',
          'last error',
        ],
        launcher.actors.map((a) => {
          const s = a.stat;
          const l = s?.summary.lateness;
          return [
            `actor ${a.group}`,
            a.status === 'ok' ? (s?.state ?? '?') : a.status,
            s?.claimed ?? '-',
            s?.done ?? '-',
            formatRate(s?.donePerSecond),
            s?.failed ?? '-',
            s?.retried ?? '-',
            s?.dead ?? '-',
            s?.inFlight ?? '-',
            s?.heldBack ?? '-',
            // An actor that started nothing yet has no lateness: not "0 µs".
            l && l.count > 0 ? formatMsList(l.p50, l.p99, l.max) : '–',
            a.restarts,
            printable(s?.lastError ?? a.lastCrash ?? ''),
          ];
        }),
        { leftAlignLast: true },
      ),
    );
    const names = launcher.totals.names ?? [];
    if (names.length > 0) {
      out.push(
        table(
          ['name', 'done', 'failed', 'handler p50 / p99'],
          names.map((n) => [
            printable(n.name),
            n.done,
            n.failed,
            formatMsList(n.summary.p50, n.summary.p99),
          ]),
        ),
      );
    }
    const intake = launcher.intake ?? [];
    if (intake.length > 0) {
      out.push(
        table(
          ['intake list', 'group', 'priority', 'length', 'moved', 'per s', 'error'],
          intake.map((l) => [
            l.scoreUnit ? `${printable(l.list)} (sorted set, ${l.scoreUnit})` : printable(l.list),
            l.group,
            l.priority,
            l.length ?? '-',
            l.items,
            l.rate,
            printable(l.error ?? ''),
          ]),
          { leftAlignLast: true },
        ),
      );
    }
  }
  return out.join('\n');
}

/** Each bucket: whose it is, its limit, the tokens in it now, and whether it holds work back. */
function rateTable(limits: BucketState[]): string {
  return table(
    ['rate limit', 'limit', 'tokens', 'limited'],
    limits.map((b) => [
      b.name === '*' ? 'whole queue' : printable(b.name),
      describeRate(b),
      `${Math.floor(b.tokens)} of ${b.cap}`,
      b.limited ? 'yes' : 'no',
    ]),
    { leftAlignLast: true },
  );
}

/**
 * What launchers found about the Redis servers: an evicting policy, a policy nobody could
 * read, a clock more than a second off, a server that came back without skyq's data. Nothing
 * when all is well.
 */
function serverLines(launchers: LauncherStats[]): string[] {
  const lines: string[] = [];
  for (const launcher of launchers) {
    for (const s of launcher.servers ?? []) {
      if (s.evicting)
        lines.push(
          `redis ${s.server}: maxmemory-policy ${s.policy} deletes queued messages when memory is full (${EVICTION_FIX})`,
        );
      if (s.dataLost)
        lines.push(
          `redis ${s.server}: ${s.dataLost.older ? 'came back with older data than skyq had written' : "came back without skyq's data"} at ${new Date(s.dataLost.at).toISOString()} (groups ${s.dataLost.groups.join(',')}; ${s.dataLostTotal ?? 1} time(s) seen by launcher ${launcher.launcherId})`,
        );
      if (s.skewMs !== null && Math.abs(s.skewMs) > SKEW_LIMIT_MS) {
        const way = s.skewMs > 0 ? 'ahead of' : 'behind';
        lines.push(
          `redis ${s.server}: clock ${(Math.abs(s.skewMs) / 1000).toFixed(1)} s ${way} launcher ${launcher.launcherId} (due times are on Redis's clock)`,
        );
      }
    }
  }
  const unique = [...new Set(lines)];
  return unique.length > 0 ? ['', ...unique] : [];
}
