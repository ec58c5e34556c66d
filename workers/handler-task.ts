// piscina task: runs the user's handler module on a pool thread for CPU-heavy
// work. It gets the job only; Redis connections and timers stay in the actors, to
// which its ctx.progress and ctx.log calls go back (src/runtime/pool-reports.ts).

import { stackOf } from '../src/queue/error-stack.js';
import type { Handler } from '../src/runtime/actor.js';
import {
  importHandler,
  type PoolJob,
  type PoolOutcome,
  type PoolReply,
} from '../src/runtime/handler.js';
import { poolReporter } from '../src/runtime/pool-reports.js';

const loaded = new Map<string, Promise<Handler>>();

const never = new AbortController().signal;

/**
 * Runs a batch of jobs at once; what each returned or threw (its name, message, code and stack)
 * travels back, and its ctx.progress and ctx.log calls go to the actor's channel `reportTo` as
 * they come.
 */
export default async function runJobs(task: {
  handler: string;
  jobs: PoolJob[];
  reportTo: string;
}): Promise<PoolReply> {
  let handler = loaded.get(task.handler);
  if (!handler) {
    handler = importHandler(task.handler);
    loaded.set(task.handler, handler);
  }
  const run = await handler;
  const reporter = poolReporter(task.reportTo);
  const outcomes = await Promise.all(
    task.jobs.map(async ([job, lateMs, ref]): Promise<PoolOutcome> => {
      try {
        const result = await run(job, reporter.contextOf(ref, lateMs, never));
        // Structured clone carries JSON values, strings and Buffers (as Uint8Array) back.
        return result === undefined ? null : { result };
      } catch (error) {
        if (error instanceof Error) {
          // The code travels too: a job no command handles is dead-lettered, not retried. The
          // stack names the handler's file and line, which the job's record keeps.
          const code = (error as { code?: unknown }).code;
          const outcome = { name: error.name, message: error.message, stack: stackOf(error) };
          return typeof code === 'string' ? { ...outcome, code } : outcome;
        }
        return { name: 'Error', message: String(error) };
      }
    }),
  );
  reporter.flush(); // posted before the outcomes go back, which tell how many
  const reported = task.jobs.map(([, , ref]) => reporter.takeCount(ref));
  return reported.some((count) => count > 0) ? { outcomes, reported } : { outcomes };
}
