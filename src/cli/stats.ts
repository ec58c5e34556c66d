// skyq stats: depth of every group, and the live figures every running
// launcher publishes (per actor: counters, lateness, state, restarts).
import type { Command } from 'commander';
import { Queue } from '../queue.js';
import { readAllStats } from '../runtime/registry.js';
import { type ConnectionFlags, printJson, queueOptions, withConnectionFlags } from './common.js';
import { table } from './table.js';

export function registerStats(program: Command): void {
  withConnectionFlags(program.command('stats'))
    .description('queue depths per group and the live figures of every running launcher')
    .option('--json', 'print JSON')
    .action(async (flags: ConnectionFlags & { json?: boolean }) => {
      const queue = new Queue(queueOptions(flags));
      try {
        const [counts, launchers] = await Promise.all([
          queue.counts(),
          readAllStats(queue.client, queue.config.prefix),
        ]);
        if (flags.json) return printJson({ groups: counts, launchers });
        console.log(
          table(
            ['group', 'delayed', 'ready', 'active', 'dead'],
            counts.map((c) => [
              `${queue.config.prefix}:${c.group}`,
              c.delayed,
              c.ready,
              c.active,
              c.dead,
            ]),
          ),
        );
        if (launchers.length === 0) console.log('\nno launcher running');
        for (const launcher of launchers) {
          const up = Math.round((launcher.at - launcher.startedAt) / 1000);
          console.log(
            `\nlauncher ${launcher.launcherId} (pid ${launcher.pid} on ${launcher.host}, up ${up} s)`,
          );
          const rows = launcher.actors.map((a) => {
            const s = a.stat;
            const l = s?.summary.lateness;
            const late = l ? `${l.p50}/${l.p99}/${l.max}` : '-';
            return [
              `actor ${a.group}`,
              a.status === 'ok' ? (s?.state ?? '?') : a.status,
              s?.claimed ?? '-',
              s?.done ?? '-',
              s?.failed ?? '-',
              s?.retried ?? '-',
              s?.dead ?? '-',
              s?.inFlight ?? '-',
              late,
              a.restarts,
              s?.lastError ?? a.lastCrash ?? '',
            ];
          });
          console.log(
            table(
              [
                'actor',
                'state',
                'claimed',
                'done',
                'failed',
                'retried',
                'dead',
                'in flight',
                'late ms p50/p99/max',
                'restarts',
                'last error',
              ],
              rows,
            ),
          );
        }
      } finally {
        await queue.close();
      }
    });
}
