// Runs one command's work with a Queue built from its connection flags, and
// closes the queue however the work ends. A command that runs until stopped (stats --watch,
// events --follow) first checks that Redis answers, so a wrong address fails in one line at
// once, then keeps reconnecting through outages, however long, as the launcher does.

import { setTimeout as sleep } from 'node:timers/promises';
import type { QueueOptions } from '../queue/config.js';
import type { Queue } from '../queue/queue.js';
import { ensureReachable } from '../redis/connection.js';
import { isConnectionLoss } from '../redis/failure.js';
import { type ConnectionFlags, queueOptions } from './common.js';

export async function withQueue<T>(
  flags: ConnectionFlags,
  work: (queue: Queue) => Promise<T>,
  until: 'done' | 'stopped' = 'done',
  extra: QueueOptions = {},
): Promise<T> {
  if (until === 'stopped') await ensureReachable(queueOptions(flags));
  // Loaded when a command runs, not when it registers (main.ts).
  const { Queue } = await import('../queue/queue.js');
  const mode = until === 'done' ? 'one-shot' : 'long-running';
  const queue = new Queue({ ...queueOptions(flags, mode), ...extra });
  try {
    return await work(queue);
  } finally {
    await queue.close();
  }
}

/**
 * withQueue for a command that only reads: it checks the data format but does not raise it, so
 * a newer skyq's `stats` or `list` leaves older launchers running (config.ts raiseFormat).
 */
export function withReader<T>(
  flags: ConnectionFlags,
  work: (queue: Queue) => Promise<T>,
  until: 'done' | 'stopped' = 'done',
): Promise<T> {
  return withQueue(flags, work, until, { raiseFormat: false });
}

/**
 * queue.ready() for a command that runs until stopped: Redis answered withQueue's check, so a
 * connection lost since is an outage to wait out (said once on stderr), not a wrong address.
 */
export async function readyThroughOutages(queue: Queue): Promise<void> {
  for (let told = false; ; told = true) {
    try {
      return await queue.ready();
    } catch (error) {
      const lost = isConnectionLoss(error) || isConnectionLoss((error as Error).cause);
      if (!lost) throw error;
      if (!told) process.stderr.write(`skyq: waiting for Redis: ${(error as Error).message}\n`);
      await sleep(1000);
    }
  }
}
