// Runs one command's work with a Queue built from its connection flags, and
// closes the queue however the work ends.
import { Queue } from '../queue/queue.js';
import { type ConnectionFlags, queueOptions } from './common.js';

export async function withQueue<T>(
  flags: ConnectionFlags,
  work: (queue: Queue) => Promise<T>,
): Promise<T> {
  const queue = new Queue(queueOptions(flags));
  try {
    return await work(queue);
  } finally {
    await queue.close();
  }
}
