// ctx.progress and ctx.log called once the actor has ended the job: its handler returned (a
// timer or a promise it left behind calls later), the time limit failed it, or shutdown handed
// it back. The actor knows the job is over and its lease gone or going, so a Redis call would
// only be refused: the call is dropped where it is made (in the actor, or on the pool thread:
// pool-reports.ts), with one line for the job in the actor's log, never one per call (a
// handler's timer may fire often).
import type { Logger } from './logger.js';

/** The one line for a job whose late calls are dropped (inline and on the pool alike). */
export function noteLateReport(log: Logger, job: string): void {
  log.warn(
    { event: 'report-late', job },
    'ctx.progress or ctx.log called after the job ended (its handler had already returned, or it timed out or was handed back): dropped, as are its later calls, with no other line',
  );
}
