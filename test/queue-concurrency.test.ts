// Many claimers at once: exactly-once delivery, and cancel / reschedule racing the claims.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Message, Queue } from '../src/index.js';
import { freshPrefix, waitFor } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';

const CLAIMERS = 10;
const GROUPS = 10;

let server: RedisServerHandle;
const queues: Queue[] = [];

/** One Queue (own connection) per claimer, plus one for the producer: all on one prefix. */
async function queues11(): Promise<{ producer: Queue; claimers: Queue[] }> {
  const prefix = freshPrefix('cc');
  const made = Array.from({ length: CLAIMERS + 1 }, () => new Queue({ redis: server.url, prefix }));
  queues.push(...made);
  await Promise.all(made.map((q) => q.ready()));
  const [producer, ...claimers] = made as [Queue, ...Queue[]];
  return { producer, claimers };
}

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await server?.stop();
});

interface Tally {
  /** id → how many times it was delivered */
  deliveries: Map<string, number>;
  /** deliveries that were not the first attempt */
  redelivered: number;
  acked: number;
}

/**
 * Each claimer walks every group, starting at its own, so all of them compete for the same
 * sets. Acks ride along with its next poll of the same group; `done()` says when to stop.
 */
async function runClaimers(
  claimers: Queue[],
  tally: Tally,
  done: () => boolean,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    claimers.map(async (q, index) => {
      const pending = new Map<number, Message[]>();
      for (let turn = index; !done(); turn++) {
        if (Date.now() > deadline) throw new Error('claimers did not finish in time');
        const group = turn % GROUPS;
        const result = await q.poll(group, {
          max: 50,
          leaseMs: 120_000,
          ack: pending.get(group) ?? [],
        });
        tally.acked += result.acked;
        pending.set(group, result.messages);
        for (const m of result.messages) {
          tally.deliveries.set(m.id, (tally.deliveries.get(m.id) ?? 0) + 1);
          if (m.attempts !== 1) tally.redelivered++;
        }
        if (result.messages.length === 0) await sleep(2);
      }
      for (const [, messages] of pending) {
        const acked = await q.ack(messages); // not `tally.acked += await`: that reads first
        tally.acked += acked;
      }
    }),
  );
}

const newTally = (): Tally => ({ deliveries: new Map(), redelivered: 0, acked: 0 });

describe('concurrent claimers', () => {
  it('10 claimers deliver each of 20,000 messages exactly once', async () => {
    const { producer, claimers } = await queues11();
    const total = 20_000;
    const tally = newTally();
    const ids: string[] = [];
    let produced = false;
    // Produce while the claimers already run; a quarter of the messages are a little delayed.
    const producing = (async () => {
      for (let start = 0; start < total; start += 2_000) {
        const batch = Array.from({ length: 2_000 }, (_, i) => ({
          body: { n: start + i },
          options: (start + i) % 4 === 0 ? { delay: (start + i) % 300 } : {},
        }));
        ids.push(...(await producer.addBulk(batch)));
      }
      produced = true;
    })();
    await runClaimers(claimers, tally, () => produced && tally.deliveries.size >= total);
    await producing;

    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    const missing = ids.filter((id) => !tally.deliveries.has(id));
    const twice = [...tally.deliveries].filter(([, n]) => n !== 1);
    const strangers = [...tally.deliveries.keys()].filter((id) => !ids.includes(id));
    expect(missing).toEqual([]);
    expect(twice).toEqual([]);
    expect(strangers).toEqual([]);
    expect(tally.redelivered).toBe(0);
    expect(tally.acked).toBe(total);
    const left = await producer.counts();
    expect(left.filter((c) => c.delayed || c.ready || c.active || c.dead)).toEqual([]);
  });

  it('the same caller ids added by 10 producers at once make one message each', async () => {
    const { producer, claimers } = await queues11();
    const wanted = Array.from({ length: 200 }, (_, i) => `order-${i}`);
    const results = await Promise.all(
      claimers.map((q, p) => q.addBulk(wanted.map((id) => ({ body: { p }, options: { id } })))),
    );
    for (const ids of results) expect(ids).toEqual(wanted);
    const counts = await producer.counts();
    expect(counts.reduce((sum, c) => sum + c.ready + c.delayed, 0)).toBe(wanted.length);
  });

  it('cancel and reschedule racing the claimers: delivered or cancelled, never both or neither', async () => {
    const { producer, claimers } = await queues11();
    const total = 4_000;
    const addedAt = Date.now();
    const ids = await producer.addBulk(
      Array.from({ length: total }, (_, i) => ({ body: i, options: { delay: (i * 37) % 1_000 } })),
    );
    const tally = newTally();
    const cancelled = new Set<string>();
    const cancelFailed = new Set<string>();
    const rescheduled = new Set<string>();
    /** deliveries seen by the time each cancel resolved true: must not contain the id */
    const deliveredBeforeCancel: string[] = [];
    let racing = true;

    const cancelling = (async () => {
      // Let the claimers take the first messages, so some cancels surely come too late.
      await waitFor('first deliveries', async () =>
        tally.deliveries.size >= 100 ? true : undefined,
      );
      const order = ids
        .map((id, i) => ({ id, i }))
        .sort((a, b) => ((a.i * 7919) % total) - ((b.i * 7919) % total));
      for (let start = 0; start < order.length; start += 100) {
        await Promise.all(
          order.slice(start, start + 100).map(async ({ id, i }) => {
            if (i % 2 === 0) {
              if (await producer.cancel(id)) {
                cancelled.add(id);
                if (tally.deliveries.has(id)) deliveredBeforeCancel.push(id);
              } else cancelFailed.add(id);
            } else if (i % 4 === 1) {
              if (await producer.reschedule(id, { delay: (i * 13) % 150 })) rescheduled.add(id);
            }
          }),
        );
      }
      racing = false;
    })();
    await runClaimers(
      claimers,
      tally,
      () => !racing && tally.deliveries.size + cancelled.size >= total,
    );
    await cancelling;
    // A cancelled message must stay gone. Any stray copy is due by the latest due time given
    // (adds up to 999 ms after addedAt, reschedules up to 149 ms after their call, all made by
    // now): one last message per group, due after that, is claimed only once every earlier one
    // was (claims take due time order), so the claimers run until those last ones came.
    const lastDue = Math.max(addedAt + 1_000, Date.now() + 150) + 50;
    const last = await producer.addBulk(
      Array.from({ length: GROUPS }, (_, group) => ({
        body: 'last',
        options: { group, delay: lastDue - Date.now() },
      })),
    );
    await runClaimers(claimers, tally, () => last.every((id) => tally.deliveries.has(id)));
    for (const id of last) {
      expect(tally.deliveries.get(id)).toBe(1);
      tally.deliveries.delete(id);
    }

    expect(cancelled.size).toBeGreaterThan(0);
    expect(cancelFailed.size).toBeGreaterThan(0); // the race really happened both ways
    expect(rescheduled.size).toBeGreaterThan(0);
    expect(deliveredBeforeCancel).toEqual([]);
    const both = [...cancelled].filter((id) => tally.deliveries.has(id));
    const neither = ids.filter((id) => !cancelled.has(id) && !tally.deliveries.has(id));
    const twice = [...tally.deliveries].filter(([, n]) => n !== 1);
    expect(both).toEqual([]);
    expect(neither).toEqual([]);
    expect(twice).toEqual([]);
    for (const id of cancelFailed) expect(tally.deliveries.get(id)).toBe(1);
    expect(cancelled.size + tally.deliveries.size).toBe(total);
    const left = await producer.counts();
    expect(left.filter((c) => c.delayed || c.ready || c.dead)).toEqual([]);
  });
});
