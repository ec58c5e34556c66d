// piscina task: runs the user's handler module on a pool thread for CPU-heavy
// work. It gets the job only; Redis connections and timers stay in the actors, to
// which its ctx.progress and ctx.log calls go back (src/runtime/pool-reports.ts).

import type { Message } from '../src/queue/message.js';
import { readThrown } from '../src/queue/thrown.js';
import type { Handler, JobContext } from '../src/runtime/actor.js';
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
  // Jobs done while others of the task still run go back ahead of the task's answer, or one
  // slow job would hold its finished siblings (unacked) and one that never ends would make them
  // all time out. Those done in one turn go together, at the end of its microtasks: no timer
  // (a task holds none), and a task whose jobs all end in that turn posts nothing ahead.
  let running = task.jobs.length;
  let ahead: [ref: number, outcome: PoolOutcome][] = [];
  const postAhead = () => {
    const posting = ahead;
    ahead = [];
    if (running === 0) return; // the task's answer carries them
    for (const [ref, outcome] of posting) reporter.settled(ref, outcome);
    reporter.flush();
  };
  const outcomes = await Promise.all(
    task.jobs.map(async ([job, lateMs, ref]): Promise<PoolOutcome> => {
      const outcome = await runOne(run, job, reporter.contextOf(ref, job.id, lateMs, never));
      reporter.ended(ref); // what it calls from now on is late: dropped (pool-reports.ts)
      if (--running > 0) {
        if (ahead.length === 0) queueMicrotask(postAhead);
        ahead.push([ref, outcome]);
      }
      return outcome;
    }),
  );
  reporter.flush(); // posted before the outcomes go back, which tell how many
  const reported = task.jobs.map(([, , ref]) => reporter.takeCount(ref));
  return reported.some((count) => count > 0) ? { outcomes, reported } : { outcomes };
}

/** One job: what it returned, or what it threw (its name, message, code and stack). */
async function runOne(run: Handler, job: Message, context: JobContext): Promise<PoolOutcome> {
  try {
    return carried(await run(job, context));
  } catch (error) {
    // Read safely (a getter or a Proxy trap may throw): one job's throw must not fail the
    // task, and with it every other job of the batch. The code travels too: a job no command
    // handles is dead-lettered, not retried. The stack names the handler's file and line.
    const { name, message, stack, code } = readThrown(error);
    const outcome = stack ? { name, message, stack } : { name, message };
    return code === undefined ? outcome : { ...outcome, code };
  }
}

/**
 * A result as it travels back. Structured clone carries JSON values, strings and Buffers (as
 * Uint8Array); a result it cannot carry (a function, a symbol, an object holding one) would fail
 * the whole task, and with it every job of the batch: it travels as the JSON the actor would keep
 * of it (an object's toJSON), or as why it has none, the words the actor's own thread uses.
 */
function carried(result: unknown): PoolOutcome {
  if (result === undefined) return null;
  const kind = typeof result;
  if (kind === 'function' || kind === 'symbol') {
    return { unserialisable: `${kind} is not a JSON value` };
  }
  if (kind !== 'object' || result === null || result instanceof Uint8Array) return { result };
  try {
    structuredClone(result);
    return { result };
  } catch {
    try {
      const json = JSON.stringify(result);
      if (json === undefined) return { unserialisable: `${kind} is not a JSON value` };
      return { result: JSON.parse(json) };
    } catch (error) {
      return { unserialisable: readThrown(error).message };
    }
  }
}
