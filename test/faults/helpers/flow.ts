/**
 * A producer that keeps adding while a fault happens, and remembers exactly which adds were
 * acknowledged: the ids of every addBulk that resolved, and of the items an AddBulkError says
 * went in. A call that failed outright acknowledged nothing (if Redis applied it anyway, its
 * messages are finished as "unexpected", never counted lost).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AddBulkError, type Body, type Queue } from '../../../src/index.js';
import { waitFor } from '../../helpers/queue.js';

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
  /** when each of `acked` was acknowledged (Date.now() as the call resolved), same order */
  readonly ackedAt: number[];
  /** the body of each acknowledged id */
  readonly bodies: Map<string, Body>;
  /** items whose add was refused (not acknowledged) */
  refused(): number;
  /** the code of each refusal's error (an AddBulkError's cause), once per code */
  refusedCodes(): string[];
  /** ends the flow after the call under way */
  stop(): Promise<void>;
}

export function startFlow(queue: Queue, options: FlowOptions = {}): Flow {
  const { batch = 10, everyMs = 20, body = { ms: 5 }, delayMs = 0 } = options;
  const acked: string[] = [];
  const ackedAt: number[] = [];
  const bodies = new Map<string, Body>();
  const make = typeof body === 'function' ? body : () => body;
  let refused = 0;
  const codes = new Set<string>();
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
        const cause = error instanceof AddBulkError ? error.cause : error;
        codes.add(String((cause as { code?: unknown } | undefined)?.code ?? cause));
      }
      const at = Date.now();
      ids.forEach((id, i) => {
        if (id === null) return;
        acked.push(id);
        ackedAt.push(at);
        bodies.set(id, (items[i] as { body: Body }).body);
      });
      await sleep(everyMs);
    }
  })();
  return {
    acked,
    ackedAt,
    bodies,
    refused: () => refused,
    refusedCodes: () => [...codes],
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** The group a generated id names ("<group>:<n>"). */
const groupOf = (id: string) => Number(id.slice(0, id.indexOf(':')));

/**
 * Producers must recover: waits until the flow has an add acknowledged after `after` (in one of
 * `groups`, when given), and resolves that time; fails after `withinMs`. Without this, a
 * producer refused for good after a fault only shrinks the set of acknowledged ids, and the
 * suite would still report 0 lost.
 */
export function ackedAfter(
  flow: Flow,
  after: number,
  withinMs: number,
  groups?: readonly number[],
): Promise<number> {
  const which = groups ? ` in group(s) ${groups.join(',')}` : '';
  return waitFor(
    `an add acknowledged${which} within ${withinMs} ms of the fault's end`,
    () => {
      for (let i = flow.ackedAt.length - 1; i >= 0 && (flow.ackedAt[i] as number) > after; i--) {
        if (!groups || groups.includes(groupOf(flow.acked[i] as string))) return flow.ackedAt[i];
      }
      return undefined;
    },
    withinMs,
    20,
  );
}
