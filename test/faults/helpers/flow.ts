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
  /** every message's body, or a maker of one per message (for bodies that tell them apart) */
  body?: Body | (() => Body);
  /** each message is due this long after its add */
  delayMs?: number;
}

export interface Flow {
  /** ids whose add was acknowledged, in order */
  readonly acked: string[];
  /** the body of each acknowledged id */
  readonly bodies: Map<string, Body>;
  /** items whose add was refused (not acknowledged) */
  refused(): number;
  /** ends the flow after the call under way */
  stop(): Promise<void>;
}

export function startFlow(queue: Queue, options: FlowOptions = {}): Flow {
  const { batch = 10, everyMs = 20, body = { ms: 5 }, delayMs = 0 } = options;
  const acked: string[] = [];
  const bodies = new Map<string, Body>();
  const make = typeof body === 'function' ? body : () => body;
  let refused = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const items = Array.from({ length: batch }, () => ({
        body: make(),
        options: { delay: delayMs },
      }));
      let ids: (string | null)[] = [];
      try {
        ids = await queue.addBulk(items);
      } catch (error) {
        if (!(error instanceof AddBulkError)) refused += batch;
        else {
          ids = error.ids;
          refused += error.failures.length;
        }
      }
      ids.forEach((id, i) => {
        if (id === null) return;
        acked.push(id);
        bodies.set(id, (items[i] as { body: Body }).body);
      });
      await sleep(everyMs);
    }
  })();
  return {
    acked,
    bodies,
    refused: () => refused,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
