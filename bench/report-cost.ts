/**
 * What ctx.progress costs Redis (issue 28, 2): not a benchmark run, a count on a server of its
 * own. One group; jobs added, claimed 100 at a time and acked (the history kept, as by
 * default, so the acks also forget older jobs and their reports), in phases:
 *   none        no reports: what every job costs
 *   time        10 calls a job of time.lua, the smallest group script: what any call costs
 *   alone       10 progress calls a job, each its own report.lua call (a job that reports
 *               less often than every 50 ms, alone in its actor: the dearest case)
 *   alone, no event  the same with report.lua's progress event left out (the price of
 *               publishing progress on the fin stream for waitFor's onProgress)
 *   together    10 progress calls a job, the 100 jobs of a claim reporting together: one call
 *               carries all of them (what the actor's 50 ms batching does for busy actors)
 *   logs        10 log lines a job, each its own call
 * For each: script calls and Redis µs per job (INFO commandstats: the time inside EVALSHA;
 * INFO cpu: the server's whole CPU, network included), beyond the job's claim and ack.
 *
 *   npm run build && node dist/bench/report-cost.js [--count 2000]
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { groupKeys } from '../src/base/keys.js';
import type { Message } from '../src/queue/message.js';
import { Queue } from '../src/queue/queue.js';
import { type PendingReport, reportArgs } from '../src/queue/reports.js';
import { scriptSource } from '../src/redis/scripts.js';
import { startRedisServer } from '../src/redis/server.js';
import { costPer, readScripts } from './script-reading.js';

const CALLS_A_JOB = 10;
const BATCH = 100;

type Phase = 'none' | 'time' | 'alone' | 'alone, no event' | 'together' | 'logs';

async function runPhase(url: string, phase: Phase, count: number, prefix: string) {
  const queue = new Queue({ redis: url, prefix, groups: 1, autoPipelining: false });
  await queue.ready();
  const client = queue.client as Redis;
  const keys = groupKeys(prefix, 0);
  // report.lua without its progress event, for 'alone, no event'.
  const quiet = scriptSource('report').replace(
    'progress = true }',
    'progress = false } -- measured without',
  );
  const quietSha = String(await client.script('LOAD', quiet));
  try {
    for (let at = 0; at < count; at += 1000) {
      await queue.addBulk(
        Array.from({ length: Math.min(1000, count - at) }, () => ({ body: 'x' })),
      );
    }
    const before = await readScripts(client);
    let ack: Message[] = [];
    for (;;) {
      const { messages } = await queue.poll(0, { max: BATCH, ack });
      ack = messages;
      if (messages.length === 0) break;
      for (let step = 1; step <= CALLS_A_JOB; step++) {
        if (phase === 'together') {
          const reports = new Map<Message, PendingReport>(
            messages.map((m) => [m, { progress: String(step * 10), logged: 0, lines: [] }]),
          );
          await queue.sendReports(0, reports);
          continue;
        }
        for (const message of messages) {
          if (phase === 'time') await queue.run('time', 0, []);
          if (phase === 'alone') await queue.progress(message, step * 10);
          if (phase === 'logs') await queue.log(message, `step ${step} of ${CALLS_A_JOB}`);
          if (phase === 'alone, no event') {
            const one = new Map([[message, { progress: String(step * 10), logged: 0, lines: [] }]]);
            await client.evalsha(quietSha, keys.length, ...keys, ...reportArgs(one, false));
          }
        }
      }
    }
    const after = await readScripts(client);
    return costPer(before, after, count, 2);
  } finally {
    await queue.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '2000' } } });
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 100) throw new Error('--count: a whole number ≥ 100');
  const server = await startRedisServer();
  try {
    const phases: Phase[] = ['none', 'time', 'alone', 'alone, no event', 'together', 'logs'];
    const rows: Record<string, unknown>[] = [];
    for (const phase of phases) {
      const got = await runPhase(server.url, phase, count, `cost${rows.length}`);
      rows.push({ phase, ...got });
    }
    const base = rows[0] as { calls: number; scriptUs: number; cpuUs: number };
    console.log(`${count} jobs, ${CALLS_A_JOB} reports a job, claims of ${BATCH}; per job:`);
    console.table(
      rows.map((row) => {
        const r = row as { phase: string; calls: number; scriptUs: number; cpuUs: number };
        return {
          ...r,
          'extra calls': Math.round((r.calls - base.calls) * 100) / 100,
          'extra script µs': Math.round((r.scriptUs - base.scriptUs) * 100) / 100,
          'extra CPU µs': Math.round((r.cpuUs - base.cpuUs) * 100) / 100,
        };
      }),
    );
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
