/**
 * Raw members: whatever any program puts in `task_group:<g>` is consumed once and acknowledged,
 * binary-safe, and none of them stalls its group (issue 7, item 2). Before, a member with a space,
 * a control byte, over 256 characters or not valid UTF-8 was refused by the id check of the next
 * ack, and the actor retried that poll forever.
 */
import { describe, expect, it } from 'vitest';
import { KEEP_FIELD, keyOf } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { recordsIn } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

interface Start {
  id: string;
  idHex: string;
  body: unknown;
  attempts: number;
}

const starts = async (): Promise<Start[]> =>
  (await redis.client.lrange('starts', 0, -1)).map((line) => JSON.parse(line) as Start);

/** Every member a test uses: empty, spaces, a tab, each control byte, bytes that are not UTF-8, 100 KB. */
const ODD: Buffer[] = [
  Buffer.alloc(0),
  Buffer.from(' spaced out '),
  Buffer.from('tab\there'),
  ...Array.from({ length: 32 }, (_, byte) => Buffer.from([0x61, byte, 0x62])),
  Buffer.from([0xff, 0xfe, 0x41]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from('x'.repeat(100 * 1024)),
];

describe('odd raw members', () => {
  it('are each consumed once and acked by the runtime, and the group goes on', async () => {
    await redis.client.del('starts');
    const where = { redis: redis.server.url, prefix: 'odd', groups: 1 };
    const queue = new Queue(where);
    const delayed = keyOf('odd', 0, 'delayed');
    for (const member of ODD) await redis.client.zadd(delayed, 0, member);
    const launcher = await startActors({
      ...where,
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
      keepDone: false, // what a done member leaves behind is history's to test
    });
    try {
      await waitFor('every odd member handled', async () =>
        (await starts()).length >= ODD.length ? true : undefined,
      );
      const after = await queue.add('after the odd ones');
      await waitFor('the next message too', async () =>
        (await starts()).some((s) => s.id === after) ? true : undefined,
      );
      await waitFor('all acked', async () => {
        const counts = (await queue.counts())[0];
        return counts && counts.delayed + counts.ready + counts.active === 0 ? true : undefined;
      });
      const seen = await starts();
      const hexes = seen.map((s) => s.idHex);
      // Once each, with their exact bytes.
      expect(hexes.sort()).toEqual(
        [...ODD.map((b) => b.toString('hex')), Buffer.from(after).toString('hex')].sort(),
      );
      expect(seen.every((s) => s.attempts === 1)).toBe(true);
      const byHex = new Map(seen.map((s) => [s.idHex, s]));
      // The body is the member: text when it is UTF-8, the bytes when it is not.
      expect(byHex.get(Buffer.from('tab\there').toString('hex'))?.body).toBe('tab\there');
      expect(byHex.get('')?.body).toBe('');
      expect(byHex.get('fffe41')?.body).toEqual({ hex: 'fffe41' });
      const long = byHex.get((ODD.at(-1) as Buffer).toString('hex'));
      expect(String(long?.body).length).toBe(102_400);
      expect((await queue.counts())[0]).toMatchObject({ dead: 0, delayed: 0, ready: 0, active: 0 });
      expect(await recordsIn(redis.client, keyOf('odd', 0, 'msg'))).toBe(0);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  });

  it('survive claim, fail, get, cancel and dead letters through the primitives, bytes intact', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'oddq', groups: 1, attempts: 1 });
    const delayed = keyOf('oddq', 0, 'delayed');
    const notUtf8 = Buffer.from([0x6e, 0xff, 0x00, 0x20]);
    try {
      await redis.client.zadd(delayed, 0, notUtf8, 0, 'keep me', 0, 'cancel me');
      expect(await queue.cancel('cancel me')).toBe(true);
      expect(await queue.get(notUtf8)).toMatchObject({ state: 'ready', body: notUtf8 });
      const claimed = await queue.claim(0, 10);
      expect(claimed.map((m) => m.id).sort()).toEqual(['keep me', 'n\\xff\u0000 ']);
      const odd = claimed.find((m) => m.idBytes);
      expect(odd?.idBytes).toEqual(notUtf8);
      expect(odd?.body).toEqual(notUtf8);
      expect(await queue.get(notUtf8)).toMatchObject({ state: 'active', attempts: 1 });
      expect(await queue.fail(odd as never, 'no good')).toBe('dead');
      const [letter] = await queue.deadLetters.list();
      expect(letter?.idBytes).toEqual(notUtf8);
      expect(letter).toMatchObject({ reason: 'failed 1 of 1 attempts', lastError: 'no good' });
      expect(await queue.deadLetters.retry({ ids: [notUtf8] })).toBe(1);
      const again = await queue.claim(0, 10);
      expect(again.map((m) => m.idBytes)).toEqual([notUtf8]);
      expect(await queue.ack([...claimed.filter((m) => !m.idBytes), ...again])).toBe(2);
      expect(await redis.client.zcard(delayed)).toBe(0);
      expect((await queue.counts())[0]).toMatchObject({ ready: 0, active: 0, dead: 0 });
    } finally {
      await queue.close();
    }
  });

  it("one named like skyq's placeholder field is a dead letter with a reason, and breaks nothing", async () => {
    // The msg, due and pri hashes hold a placeholder field (KEEP_FIELD). A member of that very
    // name used to be read as a record (then "header does not parse"), and purging it deleted
    // the placeholder from the pri hash, after which a pending priority message went unnoticed.
    const queue = new Queue({ redis: redis.server.url, prefix: 'keepq', groups: 1 });
    const delayed = keyOf('keepq', 0, 'delayed');
    try {
      await queue.add('earlier', { group: 0 }); // makes the hashes, placeholder and all
      await queue.ack(await queue.claim(0, 10));
      await redis.client.zadd(delayed, 0, KEEP_FIELD);
      expect(await queue.claim(0, 10)).toEqual([]);
      const [letter] = await queue.deadLetters.list({ group: 0 });
      expect(letter?.idBytes).toEqual(KEEP_FIELD);
      expect(letter?.reason).toMatch(/placeholder field/);
      // With a priority message pending, purging it keeps priority order.
      const now = Number((await redis.client.time())[0]) * 1000;
      const five = await queue.add('priority 5', { group: 0, priority: 5, runAt: now - 20 });
      const zero = await queue.add('priority 0', { group: 0, runAt: now - 10 });
      expect(await queue.deadLetters.purge({ group: 0 })).toBe(1);
      const claimed = await queue.claim(0, 2);
      expect(claimed.map((m) => m.id)).toEqual([zero, five]);
    } finally {
      await queue.close();
    }
  });
});
