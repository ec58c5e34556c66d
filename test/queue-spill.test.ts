/**
 * Records over 64 KiB live in a key of their own (src/queue/spill.ts): no script copies them, so a
 * 1 MiB message costs a script call no more than a small one. What must hold: bodies come back
 * intact everywhere (claim, get, dead letters), the key goes with its message (ack, cancel,
 * purge), an add that stores nothing leaves no key behind, and an add sent again keeps its key.
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { prepareMessage } from '../src/queue/add-options.js';
import { bodyKey, nextAttempt, nonceOf, SPILL_BYTES, storeSpills } from '../src/queue/spill.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const big = (tag: string) => `${tag}:${'b'.repeat(SPILL_BYTES)}`;

/** Body keys of a queue's group 0, and their time to live (-1: kept for good). */
async function bodyKeys(prefix: string): Promise<Map<string, number>> {
  const keys = await redis.plain.keys(`{${prefix}:0}:body:*`);
  return new Map(await Promise.all(keys.map(async (k) => [k, await redis.plain.pttl(k)] as const)));
}

describe('a record over 64 KiB', () => {
  it('is stored beside the msg hash and comes back intact from claim, get and dead letters', async () => {
    // Nothing kept once done: keys that stay with a kept job are the history suite's.
    const queue = await redis.queue({ groups: 1, attempts: 1, keepDone: false });
    const bytes = Buffer.alloc(SPILL_BYTES * 2, 7);
    const [text, json, raw] = await queue.addBulk([
      { body: big('text') },
      { body: { list: [big('json')] } },
      { body: bytes },
    ]);
    const stub = await redis.plain.hgetBuffer(keyOf(queue.config.prefix, 0, 'msg'), text as string);
    expect(nonceOf(stub)).not.toBeNull();
    expect([...(await bodyKeys(queue.config.prefix)).values()]).toEqual([-1, -1, -1]);
    expect((await queue.get(text as string))?.body).toBe(big('text'));
    const claimed = await queue.claim(0, 10);
    expect(claimed.map((m) => m.id)).toEqual([text, json, raw]);
    expect(claimed[0]?.body).toBe(big('text'));
    expect(claimed[1]?.body).toEqual({ list: [big('json')] });
    expect(claimed[2]?.body).toEqual(bytes);
    await queue.ack(claimed.slice(0, 2));
    expect(await queue.fail(claimed[2] as never, 'no')).toBe('dead');
    const [letter] = await queue.deadLetters.list({ group: 0 });
    expect(letter?.body).toEqual(bytes);
    expect((await bodyKeys(queue.config.prefix)).size).toBe(1); // the acked ones' keys are gone
    expect(await queue.deadLetters.purge({ group: 0 })).toBe(1);
    expect((await bodyKeys(queue.config.prefix)).size).toBe(0);
  });

  it('goes with a cancel, and an add that stores nothing leaves no key', async () => {
    const queue = await redis.queue({ groups: 1 });
    const id = await queue.add(big('first'), { id: 'order:1', delay: 60_000 });
    expect(await queue.add(big('second'), { id: 'order:1', delay: 60_000 })).toBe(id);
    expect((await queue.get('order:1'))?.body).toBe(big('first'));
    expect((await bodyKeys(queue.config.prefix)).size).toBe(1);
    expect(await queue.cancel('order:1')).toBe(true);
    expect((await bodyKeys(queue.config.prefix)).size).toBe(0);
  });

  it('sent again by the client (its reply was lost) is stored once and kept for good', async () => {
    const queue = await redis.queue({ groups: 1 });
    const message = prepareMessage(queue.config, big('again'), { group: 0 });
    const spill = message.spill;
    if (!spill) throw new Error('expected a spilled record');
    const attempt = nextAttempt(spill);
    const key = bodyKey(queue.config.prefix, 0, attempt.nonce);
    const spills = keyOf(queue.config.prefix, 0, 'spills');
    const args = ['1', '', '1', '0', '0', '1', '', '0', '0:a1', '', attempt.stub];
    args.push('1', String(spill.bytes), attempt.nonce);
    for (let round = 0; round < 2; round++) {
      // What a resend does: the MULTI of body and spills line, then the add.
      await storeSpills(queue.client, queue.config.prefix, 0, spills, [attempt], Date.now());
      await queue.run('add', 0, args);
    }
    expect(await redis.plain.pttl(key)).toBe(-1);
    const claimed = await queue.claim(0, 10);
    expect(claimed.map((m) => [m.id, m.body])).toEqual([['0:a1', big('again')]]);
  });

  it('whose key is gone is a dead letter that says so', async () => {
    const queue = await redis.queue({ groups: 1 });
    const id = await queue.add(big('lost'));
    for (const key of (await bodyKeys(queue.config.prefix)).keys()) await redis.plain.del(key);
    expect(await queue.claim(0, 10)).toEqual([]);
    const [letter] = await queue.deadLetters.list({ group: 0 });
    expect(letter?.id).toBe(id);
    expect(letter?.reason).toMatch(/body key .* is gone/);
  });
});
