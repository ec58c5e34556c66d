// Everything an actor thread does at start: connect, load scripts, load the
// handler, then say "ready" to the launcher, or "failed" with the reason.
import type { MessagePort } from 'node:worker_threads';
import { keyOf } from '../base/keys.js';
import { type QueueOptions, queueConfig } from '../queue/config.js';
import { Queue } from '../queue/queue.js';
import { connect } from '../redis/connection.js';
import { watchConnection } from '../redis/outage.js';
import { Actor, type ActorSettings, type Handler } from './actor.js';
import { defaultHandler, importHandler, type PoolApi, poolHandler } from './handler.js';
import { LeaseMirror } from './lease-mirror.js';
import { actorLogFile } from './log-names.js';
import { fileLogger } from './logger.js';
import { type Remote, remote, serve } from './rpc.js';
import { scheduleRepair } from './schedule-repair.js';
import { StatBlock } from './stat-block.js';
import { surviveStrayErrors } from './stray-errors.js';
import { lowerThreadPriority } from './thread-priority.js';
import { Waker } from './waker.js';

export interface ActorThreadData {
  settings: ActorSettings;
  queue: QueueOptions;
  /** file URL of the handler module; null = the default handler */
  handler: string | null;
  logDir: string;
  logLevel: string;
  /** nice steps this thread lowers its priority by (thread-priority.ts) */
  nice: number;
  /** how many times this group's actor was restarted before */
  restarts: number;
  /** the group's figures, shared with the coordinator (kept across restarts) */
  stats: SharedArrayBuffer;
  /** this thread's leases, mirrored for its supervisor to hand back if it dies (a new one each start) */
  leases: SharedArrayBuffer;
  coordinatorPort: MessagePort;
  /** present when handlers run in the launcher's piscina pool */
  poolPort: MessagePort | null;
}

export type ActorReport = { kind: 'ready' } | { kind: 'failed'; reason: string };

export async function runActorThread(parent: MessagePort, data: ActorThreadData): Promise<void> {
  const { group } = data.settings;
  const { logger, flush } = fileLogger(actorLogFile(data.logDir, group), { group }, data.logLevel);
  let queue: Queue | undefined;
  try {
    const priority = lowerThreadPriority(data.nice);
    if (priority.note) {
      logger.warn({ event: 'priority', note: priority.note }, 'actor thread priority left as is');
    }
    if (data.restarts > 0)
      logger.warn({ event: 'restarted', restarts: data.restarts }, 'actor restarted after a crash');
    // One call at a time: auto-pipelining would only add a tick to each.
    // No bound on waits (unreachableMs 0): a call that times out on a slow, loaded server may
    // still be applied, and an ack given up on that way runs its jobs twice once their leases
    // lapse. An actor waits for its answers, through outages too, and retries what failed.
    queue = new Queue({
      ...data.queue,
      autoPipelining: false,
      warnEviction: false,
      unreachableMs: 0,
    });
    await queue.ready();
    const config = queueConfig(data.queue);
    const waker = new Waker(
      // A lone BLPOP at a time: auto-pipelining would only route it through a pipeline.
      connect(
        { ...data.queue, autoPipelining: false },
        { name: `skyq-wake-${group}`, blocking: true },
      ),
      keyOf(config.prefix, group, 'wake'),
    );
    let handler: Handler;
    if (data.poolPort)
      handler = poolHandler(remote<PoolApi>(data.poolPort) as Remote<PoolApi>, logger);
    else if (data.handler) handler = await importHandler(data.handler);
    else handler = defaultHandler(logger);
    const stats = new StatBlock(data.stats);
    // Only where the handler's code runs in this thread (not on the pool).
    if (data.handler && !data.poolPort) surviveStrayErrors(logger, stats);
    const leases = new LeaseMirror(data.leases);
    const actor = new Actor(data.settings, queue, waker, handler, logger, stats, leases);
    // One line when Redis goes away and one when it is back, not one per retry.
    const outage = watchConnection(queue.client, (change) => {
      if (change.state === 'down') {
        stats.lastError = `Redis unreachable: ${change.reason}`;
        logger.warn({ event: 'redis-down', reason: change.reason }, 'Redis unreachable');
      } else logger.info({ event: 'redis-up', downMs: change.downMs }, 'Redis back');
    });
    // An idle actor sits in BLPOP, which a frozen server never ends: a PING each chores round.
    actor.addChore(() => outage.heartbeat());
    actor.addChore(scheduleRepair(queue, group, logger));
    const api = actor.api();
    const drain = api.drain;
    // Closing connections and flushing the log belong to the drain the launcher asks for.
    api.drain = async (graceMs) => {
      const result = await drain(graceMs);
      outage.stop();
      waker.close();
      await queue?.close();
      flush();
      return result;
    };
    serve(api, parent);
    serve(api, data.coordinatorPort);
    actor.start();
    parent.postMessage({ kind: 'ready' } satisfies ActorReport);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    logger.error({ event: 'start-failed', err: reason }, 'actor could not start');
    flush();
    await queue?.close().catch(() => undefined);
    parent.postMessage({ kind: 'failed', reason } satisfies ActorReport);
  }
}
