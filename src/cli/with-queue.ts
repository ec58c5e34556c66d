// Runs one command's work with a Queue built from its connection flags, and
// closes the queue however the work ends. A command that runs until stopped (stats --watch,
// events --follow) first checks that Redis answers, so a wrong address fails in one line at
// once, then keeps reconnecting through outages, however long, as the launcher does.
import { Queue } from '../queue/queue.js';
import { ensureReachable } from '../redis/connection.js';
import { type ConnectionFlags, queueOptions } from './common.js';

export async function withQueue<T>(
  flags: ConnectionFlags,
  work: (queue: Queue) => Promise<T>,
  until: 'done' | 'stopped' = 'done',
): Promise<T> {
  if (until === 'stopped') await ensureReachable(queueOptions(flags));
  const queue = new Queue(queueOptions(flags, until === 'done' ? 'one-shot' : 'long-running'));
  try {
    return await work(queue);
  } finally {
    await queue.close();
  }
}
