/**
 * A producer that keeps adding while a fault happens, and remembers exactly which adds were
 * acknowledged: the ids of every addBulk that resolved, and of the items an AddBulkError says
 * went in. A call that failed outright acknowledged nothing (if Redis applied it anyway, its
 * messages are finished as "unexpected", never counted lost).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AddBulkError, type Body, type Queue } from '../../../src/index.js';

export interface FlowOptions {
  /** messages per addBulk call */
  batch?: number;
  /** pause between calls */
  everyMs?: number;
  body?: Body;
  /** each message is due this long after its add */
  delayMs?: number;
}

export interface Flow {
  /** ids whose add was acknowledged, in order */
  readonly acked: string[];
  /** items whose add was refused (not acknowledged) */
  refused(): number;
  /** ends the flow after the call under way */
  stop(): Promise<void>;
}

export function startFlow(queue: Queue, options: FlowOptions = {}): Flow {
  const { batch = 10, everyMs = 20, body = { ms: 5 }, delayMs = 0 } = options;
  const acked: string[] = [];
  let refused = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const items = Array.from({ length: batch }, () => ({ body, options: { delay: delayMs } }));
      try {
        acked.push(...(await queue.addBulk(items)));
      } catch (error) {
        if (!(error instanceof AddBulkError)) refused += batch;
        else {
          for (const id of error.ids) if (id !== null) acked.push(id);
          refused += error.failures.length;
        }
      }
      await sleep(everyMs);
    }
  })();
  return {
    acked,
    refused: () => refused,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
