/**
 * The pieces behind handing back a dead actor thread's leases (test/thread-death-leases runs
 * them end to end): the mirror an actor keeps of its claims in shared memory (bounded,
 * compacted, readable after the thread is gone), the error a handed-back job keeps, and the
 * hand-back itself on a real Redis: only leases the dead thread's token still holds are
 * touched, one leased ahead goes back to wait for its due time, and one on its last attempt
 * becomes a dead letter that names the death.
 */
import { describe, expect, it } from 'vitest';
import { type Message, Queue } from '../src/index.js';
import { diedError, handBack } from '../src/runtime/hand-back.js';
import { LeaseMirror, mirroredLeases } from '../src/runtime/lease-mirror.js';
import { useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** Messages as a claim hands them over: only the id, its bytes and the token matter here. */
function claimOf(token: string, ids: string[]): Message[] {
  return ids.map((id) => ({ id, token }) as Message);
}

const idsOf = (mirror: LeaseMirror) =>
  mirroredLeases(mirror.buffer).map(({ token, ids }) => ({
    token,
    ids: ids.map((id) => id.toString('latin1')),
  }));

describe('the lease mirror', () => {
  it('holds each claim until its last job ends, ids as their exact bytes', () => {
    const mirror = new LeaseMirror();
    const raw = { id: 'raw\\xff', idBytes: Buffer.from([0x72, 0xff]), token: '7.1' } as Message;
    const first = mirror.hold([...claimOf('7.1', ['a', 'b']), raw]);
    const second = mirror.hold(claimOf('8.2', ['c']));
    expect(idsOf(mirror)).toEqual([
      { token: '7.1', ids: ['a', 'b', 'r\xff'] },
      { token: '8.2', ids: ['c'] },
    ]);
    for (const place of [0, 1, 2]) expect(first?.place()).toBe(place);
    first?.end(0);
    first?.end(2);
    expect(idsOf(mirror)).toHaveLength(2); // a claim leaves whole, with its last job
    first?.end(1);
    expect(idsOf(mirror)).toEqual([{ token: '8.2', ids: ['c'] }]);
    second?.end(0);
    expect(idsOf(mirror)).toEqual([]);
    expect(mirror.hold([])).toBeNull();
  });

  it('makes room by dropping ended jobs, and past its bound mirrors what fits', () => {
    const mirror = new LeaseMirror();
    const ids = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}-${i}`);
    // One claim stays with one job running; a stream of others ends behind it.
    const long = mirror.hold(claimOf('1.1', ids(100, 'long')));
    for (let i = 0; i < 100; i++) long?.place();
    for (let i = 1; i < 100; i++) long?.end(i);
    for (let n = 0; n < 300; n++) {
      const claim = mirror.hold(claimOf(`${n + 2}.1`, ids(100, `c${n}`)));
      expect(claim).not.toBeNull();
      for (let i = 0; i < 100; i++) claim?.place();
      for (let i = 0; i < 100; i++) claim?.end(i);
    }
    // Compacted many times over: the long claim keeps its one running job, nothing else.
    expect(idsOf(mirror)).toEqual([{ token: '1.1', ids: ['long-0'] }]);
    // Far more than fits: the first ids go in, the rest would come back by lease expiry.
    const huge = mirror.hold(claimOf('9.9', ids(20_000, 'h')));
    expect(huge).not.toBeNull();
    const held = idsOf(mirror).find((c) => c.token === '9.9')?.ids ?? [];
    expect(held.length).toBeGreaterThan(1000);
    expect(held.length).toBeLessThan(20_000);
    expect(held.slice(0, 3)).toEqual(['h-0', 'h-1', 'h-2']);
  });
});

describe('the error a handed-back job keeps', () => {
  it('says the thread died, in one short line with no password', () => {
    expect(diedError('hung: no heartbeat for 30000 ms')).toBe(
      'its actor thread died: hung: no heartbeat for 30000 ms',
    );
    const stack = `Error: cannot reach redis://app:hunter2@db:6379\n    at connect (x.js:1:1)`;
    expect(diedError(stack)).toBe(
      'its actor thread died: Error: cannot reach redis://app:***@db:6379',
    );
    expect(diedError('x'.repeat(1000)).length).toBeLessThan(250);
    expect(diedError('')).toBe('its actor thread died');
  });
});

describe('handing back a dead thread’s leases', () => {
  it('touches only the leases its tokens still hold; one leased ahead waits for its time', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'hb', groups: 1 });
    try {
      const now = await queue.add('due now', { attempts: 3 });
      const later = await queue.add('due later', { delay: 30_000, attempts: 3 });
      const polled = await queue.poll(0, { max: 10, leaseMs: 60_000, lookaheadMs: 60_000 });
      expect(polled.messages.map((m) => m.id).sort()).toEqual([now, later].sort());
      const dueLater = polled.messages.find((m) => m.id === later)?.dueAt;
      // Another consumer's lease, and a lease by a token that no longer holds.
      const other = await queue.add('another consumer');
      const [taken] = (await queue.claim(0, 1, 60_000)) as [Message];
      const mirror = new LeaseMirror();
      mirror.hold(polled.messages);
      mirror.hold([{ ...taken, token: '1.1' }]);

      expect(await handBack(queue, 0, mirror.buffer, 'hung: no heartbeat for 500 ms')).toBe(2);
      const died = 'its actor thread died: hung: no heartbeat for 500 ms';
      expect(await queue.get(now)).toMatchObject({ state: 'ready', lastError: died });
      expect(await queue.get(later)).toMatchObject({
        state: 'delayed',
        dueAt: dueLater,
        lastError: died,
      });
      expect(await queue.get(other)).toMatchObject({ state: 'active', lastError: null });
      // Handed back once: the same mirror again finds nothing of its own.
      expect(await handBack(queue, 0, mirror.buffer, 'again')).toBe(0);
      const again = await queue.claim(0, 10, 60_000);
      expect(again.map((m) => [m.id, m.attempts])).toEqual([[now, 2]]);
    } finally {
      await queue.close();
    }
  });

  it('makes one on its last attempt a dead letter that names the death', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'hb-last', groups: 1 });
    try {
      const id = await queue.add('last try', { attempts: 1 });
      const leased = await queue.claim(0, 1, 60_000);
      const mirror = new LeaseMirror();
      mirror.hold(leased);
      expect(await handBack(queue, 0, mirror.buffer, 'thread exited with code 3')).toBe(1);
      expect(await queue.claim(0, 1, 60_000)).toEqual([]);
      expect(await queue.get(id)).toMatchObject({
        state: 'dead',
        deadReason: 'its actor thread died on the last of 1 attempts: thread exited with code 3',
      });
    } finally {
      await queue.close();
    }
  });
});
