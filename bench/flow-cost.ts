/**
 * What a flow costs Redis (issue 28, 1): not a benchmark run, a count on a server of its own.
 * Units of 11 jobs, consumed as the actors consume (claims of up to 100, each carrying the acks
 * of the batch before it), in three phases:
 *   plain        11 messages added together: what the same jobs cost without a flow
 *   one group    a flow of 1 parent and 10 children in one group (the default placement)
 *   across       the same with its children in two other groups (their outcomes relayed into
 *                the parent's, then the sweep that confirms and clears each relayed outcome)
 * Each parent's children are read before it runs (flows.children), as the runtime does. For
 * each: script calls, Redis µs (INFO commandstats: the time inside EVALSHA) and the server's
 * CPU µs (INFO cpu, network included), per unit of 11 jobs.
 *
 *   npm run build && node dist/bench/flow-cost.js [--count 200]
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import type { Message } from '../src/queue/message.js';
import { Queue } from '../src/queue/queue.js';
import { startRedisServer } from '../src/redis/server.js';
import { costPer, readScripts } from './script-reading.js';

type Phase = 'plain' | 'one group' | 'across';
const CHILDREN = 10;

/** Claims every group in turn, acks riding on the next claim, until all are idle twice. */
async function consume(queue: Queue, groups: number[]): Promise<void> {
  const acks = new Map<number, Message[]>(groups.map((g) => [g, []]));
  for (let idle = 0; idle < 2; ) {
    let got = 0;
    for (const group of groups) {
      const { messages } = await queue.poll(group, { max: 100, ack: acks.get(group) ?? [] });
      for (const message of messages) {
        if (message.childCount !== undefined)
          message.children = await queue.flows.children(message);
      }
      acks.set(group, messages);
      got += messages.length;
    }
    await queue.flows.relay.settled(); // the relays the acks started
    idle = got === 0 ? idle + 1 : 0;
  }
}

async function runPhase(url: string, phase: Phase, count: number, prefix: string) {
  const queue = new Queue({ redis: url, prefix, groups: 3, autoPipelining: false });
  await queue.ready();
  const client = queue.client as Redis;
  try {
    // Id blocks reserved and scripts loaded first: neither is a flow's cost.
    await queue.flows.add({
      body: 'w',
      children: [0, 1, 2].map((group) => ({ body: 'w', options: { group } })),
    });
    await consume(queue, [0, 1, 2]);
    for (let g = 0; g < 3; g++) await queue.flows.sweep(g);
    const before = await readScripts(client);
    for (let unit = 0; unit < count; unit++) {
      if (phase === 'plain') {
        await queue.addBulk(
          Array.from({ length: CHILDREN + 1 }, () => ({ body: 'x', options: { group: 0 } })),
        );
        continue;
      }
      const place = (i: number) => (phase === 'across' ? { group: 1 + (i % 2) } : {});
      await queue.flows.add({
        body: 'parent',
        options: { group: 0 },
        children: Array.from({ length: CHILDREN }, (_, i) => ({ body: 'x', options: place(i) })),
      });
    }
    await consume(queue, phase === 'across' ? [1, 2, 0] : [0]);
    // The actors' sweeps: each relayed outcome confirmed and cleared.
    if (phase === 'across')
      for (let round = 0; round < 2; round++) for (const g of [1, 2]) await queue.flows.sweep(g);
    const after = await readScripts(client);
    return costPer(before, after, count, 1);
  } finally {
    await queue.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '200' } } });
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 10) throw new Error('--count: a whole number ≥ 10');
  const server = await startRedisServer();
  try {
    const rows: Record<string, unknown>[] = [];
    for (const phase of ['plain', 'one group', 'across'] as Phase[]) {
      rows.push({ phase, ...(await runPhase(server.url, phase, count, `flowcost${rows.length}`)) });
    }
    console.log(
      `${count} units of ${CHILDREN + 1} jobs (1 parent and ${CHILDREN} children); per unit:`,
    );
    console.table(rows);
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
