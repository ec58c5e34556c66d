/**
 * What a flow costs Redis (issue 28, Done means): a flow of 1 parent and 10 children, run as the
 * actors run it (acks ride on the next claim), counted in script calls and in Redis's own time
 * for them (INFO commandstats: EVALSHA calls and µs), beside 11 plain messages run the same
 * way. One group: the flow costs two calls more than the plain messages (the parent's own
 * claim and ack come after its children, and one read of their outcomes). Children in two
 * other groups: their outcomes are relayed (one call per parent group), then cleared once a
 * second relay found them recorded. The figures print; the call counts are checked.
 */
import { describe, expect, it } from 'vitest';
import type { Message, Queue } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

/** Script calls and their Redis µs since the last reset. */
async function scriptCost(): Promise<{ calls: number; usec: number }> {
  const info = await redis.plain.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/g)) {
    calls += Number(match[1]);
    usec += Number(match[2]);
  }
  return { calls, usec };
}

/** Claims beyond the first that pollAll needed: on a loaded machine the client's estimate of
 * Redis's clock can put a due time a few ms after the claim's now, so a claim comes back short.
 * They are the test's waiting, not the flow's cost, and are left out of the counts. */
let extraPolls = 0;

/** Claims until `count` are leased, acking `ack` with the first claim (as an actor does). */
async function pollAll(q: Queue, group: number, count: number, ack: Message[] = []) {
  const got: Message[] = [];
  let first = true;
  while (got.length < count) {
    if (!first) extraPolls += 1;
    const polled = await q.poll(group, { max: 100, ack: first ? ack : [] });
    first = false;
    got.push(...polled.messages);
  }
  return got;
}

describe('what a flow of 1 parent and 10 children costs', () => {
  it('in one group, across groups, and beside 11 plain messages', async () => {
    const q = await redis.queue({ groups: 3 });
    // Id blocks reserved and scripts loaded beforehand: neither is a flow's cost.
    const warm = [0, 1, 2].map((group) => ({ body: 'w', options: { group } }));
    await q.flows.add({ body: 'warm', options: { group: 0 }, children: warm });
    await q.addBulk([{ body: 'warm', options: { group: 0 } }]);
    for (let g = 0; g < 3; g++) await q.ack(await q.claim(g, 100));
    await q.flows.relay.settled();
    for (let round = 0; round < 2; round++) for (let g = 0; g < 3; g++) await q.flows.sweep(g);
    await q.ack(await q.claim(0, 100));

    const measure = async (run: () => Promise<void>) => {
      await redis.plain.config('RESETSTAT');
      extraPolls = 0;
      await run();
      const cost = await scriptCost();
      return { ...cost, calls: cost.calls - extraPolls, extraPolls };
    };
    const plain = await measure(async () => {
      await q.addBulk(Array.from({ length: 11 }, () => ({ body: 'x', options: { group: 0 } })));
      const jobs = await pollAll(q, 0, 11);
      await q.poll(0, { ack: jobs });
    });
    const oneGroup = await measure(async () => {
      await q.flows.add({
        body: 'parent',
        options: { group: 0 },
        children: Array.from({ length: 10 }, () => ({ body: 'x' })),
      });
      const children = await pollAll(q, 0, 10);
      // The children's ack releases the parent, which the same claim leases.
      const [parent] = await pollAll(q, 0, 1, children);
      expect((await q.flows.children(parent as Message)).length).toBe(10);
      await q.poll(0, { ack: [parent as Message] });
    });
    const acrossGroups = await measure(async () => {
      await q.flows.add({
        body: 'parent',
        options: { group: 0 },
        children: Array.from({ length: 10 }, (_, i) => ({
          body: 'x',
          options: { group: 1 + (i % 2) },
        })),
      });
      const ones = await pollAll(q, 1, 5);
      const twos = await pollAll(q, 2, 5);
      await q.poll(1, { ack: ones });
      await q.poll(2, { ack: twos });
      await q.flows.relay.settled(); // the client's relay right after each ack
      const [parent] = await pollAll(q, 0, 1);
      await q.flows.children(parent as Message);
      await q.poll(0, { ack: [parent as Message] });
      // The actors' next sweep of each group confirms and clears the relayed outcomes.
      await q.flows.sweep(1);
      await q.flows.sweep(2);
    });
    const figures = { plain, oneGroup, acrossGroups };
    console.log(`flow cost (script calls, Redis µs): ${JSON.stringify(figures)}`);
    // plain: add, claim, ack. One group: flow-add, claim, ack + claim of the parent, its
    // children's outcomes, its ack.
    expect(plain.calls).toBe(3);
    expect(oneGroup.calls).toBe(5);
    // Across: flow-add ×3 (the root's wave, then one call in each children's group), a claim
    // and an ack in groups 1 and 2, per group a relay round right after its ack (read the
    // outbox, record in group 0: 2), the parent's claim, read and ack (3), then per group the
    // sweep's confirming round (read, found recorded, clear: 3).
    expect(acrossGroups.calls).toBe(3 + 4 + 4 + 3 + 6);
  });
});
