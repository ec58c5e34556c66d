/**
 * The claim's side of the per-name rate limits (claim.lua, lib-held.lua), through Queue.poll's
 * `limits`: a claim leases of a limited name only as many as it is granted and holds the rest
 * back, in order, as ready messages with their own due time; the next grants take them first;
 * a claim that does not limit the name takes them all; an empty band is forgotten.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('a claim with per-name limits', () => {
  it('leases what is granted, holds the rest in order, and a claim without the limit takes them', async () => {
    const prefix = 'rclaim';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await queue.ready();
    // Ten mails, priorities 0, 1, 0, 1 …: in claim order the five of priority 0 come first.
    const mails = await queue.addBulk(
      Array.from({ length: 10 }, (_, i) => ({
        body: `mail ${i}`,
        options: { name: 'mail', priority: i % 2 },
      })),
    );
    const others = await queue.addBulk(
      Array.from({ length: 5 }, (_, i) => ({ body: `other ${i}`, options: { priority: 1 } })),
    );
    const order = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9].map((i) => mails[i] as string);
    const dues = new Map<string, number>();
    for (const id of mails) dues.set(id, (await queue.get(id))?.dueAt as number);
    try {
      const limits = (grant: number) => [{ name: 'mail', grant }];
      const first = await queue.poll(0, { max: 20, limits: limits(3) });
      expect(first.messages.filter((m) => m.name === 'mail').map((m) => m.id)).toEqual(
        order.slice(0, 3),
      );
      expect(first.messages.filter((m) => m.name !== 'mail').map((m) => m.id)).toEqual(others);
      expect(first).toMatchObject({ heldBack: 7, held: [7] });
      // Held: ready, with the due time they were added with, and nothing leased of them.
      const held = order[5] as string;
      expect(await queue.get(held)).toMatchObject({ state: 'ready', dueAt: dues.get(held) });
      expect((await queue.counts())[0]).toMatchObject({ ready: 7, active: 8 });

      const second = await queue.poll(0, { max: 20, limits: limits(2) });
      expect(second.messages.map((m) => m.id)).toEqual(order.slice(3, 5));
      expect(second.messages.map((m) => m.dueAt)).toEqual(
        order.slice(3, 5).map((id) => dues.get(id)),
      );
      expect(second).toMatchObject({ heldBack: 0, held: [5] });
      // Ungranted, a fresh claim leases none of them, and says a claim is due within a second.
      const none = await queue.poll(0, { max: 20, limits: limits(0) });
      expect(none.messages).toEqual([]);
      expect(none.nextDueAt - none.now).toBeGreaterThan(0);
      expect(none.nextDueAt - none.now).toBeLessThanOrEqual(1000);

      // A claim that does not limit mail does not hold it back: the rest, in order.
      const free = await queue.poll(0, { max: 20 });
      expect(free.messages.map((m) => m.id)).toEqual(order.slice(5));
      expect(free).toMatchObject({ heldBack: 0, held: [] });
      expect(await redis.client.exists(`{${prefix}:0}:held`)).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('held messages keep their place: a cancel takes one out, a later one goes by priority and due time', async () => {
    const prefix = 'rclaim2';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    await queue.ready();
    const ids = await queue.addBulk(
      Array.from({ length: 4 }, (_, i) => ({ body: i, options: { name: 'mail', priority: 1 } })),
    );
    try {
      const limits = (grant: number) => [{ name: 'mail', grant }];
      expect((await queue.poll(0, { max: 10, limits: limits(0) })).held).toEqual([4]);
      expect(await queue.cancel(ids[1] as string)).toBe(true);
      const urgent = await queue.add('urgent', { name: 'mail', priority: 0 });
      const later = await queue.add('later', { name: 'mail', priority: 1 });
      const polled = await queue.poll(0, { max: 10, limits: limits(10) });
      expect(polled.messages.map((m) => m.id)).toEqual([urgent, ids[0], ids[2], ids[3], later]);
    } finally {
      await queue.close();
    }
  });

  it('a bad grant is one line naming it', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'rclaim3', groups: 1 });
    try {
      await expect(queue.poll(0, { limits: [{ name: 'mail', grant: -1 }] })).rejects.toThrow(
        /limits\[0\]\.grant/,
      );
      await expect(queue.poll(0, { limits: [{ name: '', grant: 1 }] })).rejects.toThrow(
        /limits\[0\]\.name/,
      );
    } finally {
      await queue.close();
    }
  });
});
