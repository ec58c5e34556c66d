// piscina task: runs the user's handler module on a pool thread for CPU-heavy
// work. It gets the job only; Redis connections and timers stay in the actors.

import type { Message } from '../src/message.js';
import type { Handler } from '../src/runtime/actor.js';
import { importHandler } from '../src/runtime/handler.js';

const loaded = new Map<string, Promise<Handler>>();

const never = new AbortController().signal;

export default async function runJob(task: {
  handler: string;
  job: Message;
  lateMs: number;
}): Promise<void> {
  let handler = loaded.get(task.handler);
  if (!handler) {
    handler = importHandler(task.handler);
    loaded.set(task.handler, handler);
  }
  await (await handler)(task.job, { signal: never, lateMs: task.lateMs });
}
