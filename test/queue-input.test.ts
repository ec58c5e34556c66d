// Every bad input rejects with a SkyqError naming the field, and nothing is stored: each
// rejected call is checked on its own against every key on the server (the sorted sets, the
// :msg hash, :body:* keys, the id counters), before and after.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AddOptions, type Body, type Message, Queue, SkyqError } from '../src/index.js';
import { openQueue } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';

let server: RedisServerHandle;
let q: Queue;
let plain: Redis;

beforeAll(async () => {
  server = await startStandalone();
  q = await openQueue({ redis: server.url }, { maxBodyBytes: 1000 });
  plain = new Redis(server.url);
});

afterAll(async () => {
  plain?.disconnect();
  await q?.close();
  await server?.stop();
});

/** Every key on this file's private server with its serialized value (DUMP): what is stored. */
async function keyspace(): Promise<Map<string, string>> {
  const keys: Buffer[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await plain.scanBuffer(cursor, 'COUNT', 1000);
    cursor = String(next);
    keys.push(...batch);
  } while (cursor !== '0');
  const values = await Promise.all(keys.map((key) => plain.dumpBuffer(key)));
  return new Map(keys.map((key, i) => [key.toString('latin1'), values[i]?.toString('hex') ?? '']));
}

/**
 * Resolves to the SkyqError `call` rejected with; fails the test when it resolved, or when any
 * key on the server changed (appeared, went, or holds something else) through the call.
 */
async function rejection(call: () => Promise<unknown>): Promise<SkyqError> {
  const before = await keyspace();
  const outcome = await call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${String(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(SkyqError);
  expect(await keyspace(), 'the keys after the rejected call').toEqual(before);
  return outcome.error as SkyqError;
}

/** `call` rejects naming `field` (and with `code`), having stored nothing. */
async function expectNamed(call: () => Promise<unknown>, field: string, code?: string) {
  const error = await rejection(call);
  expect(error.message).toContain(field);
  expect(error.field).toBe(field);
  if (code) expect(error.code).toBe(code);
  return error;
}

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;

const badOptions: [string, Record<string, unknown>, string][] = [
  ['negative delay', { delay: -1 }, 'delay'],
  ['NaN delay', { delay: Number.NaN }, 'delay'],
  ['infinite delay', { delay: Number.POSITIVE_INFINITY }, 'delay'],
  ['string delay', { delay: '10' }, 'delay'],
  ['delay that is no duration', { delay: 'soon' }, 'delay'],
  ['delay with runAt', { delay: 10, runAt: Date.now() + 1000 }, 'delay'],
  ['invalid runAt date', { runAt: new Date('nope') }, 'runAt'],
  // Microseconds for milliseconds: 50,000 years ahead, a message that would never run.
  ['runAt in microseconds', { runAt: Date.now() * 1000 }, 'runAt'],
  ['runAt past 100 years', { runAt: new Date('2200-01-01') }, 'runAt'],
  ['negative priority', { priority: -1 }, 'priority'],
  ['fractional priority', { priority: 1.5 }, 'priority'],
  ['priority over the limit', { priority: 1_000_001 }, 'priority'],
  ['group past the last', { group: 10 }, 'group'],
  ['negative group', { group: -1 }, 'group'],
  ['empty id', { id: '' }, 'id'],
  ['id with spaces', { id: 'order 42' }, 'id'],
  ['id of 300 characters', { id: 'x'.repeat(300) }, 'id'],
  ['empty key', { key: '' }, 'key'],
  ['zero attempts', { attempts: 0 }, 'attempts'],
  ['unknown backoff type', { backoff: { type: 'linear', delay: 10 } }, 'backoff.type'],
  ['unknown option name', { dealy: 100 }, 'dealy'],
];

const badBodies: [string, unknown, RegExp][] = [
  ['undefined', undefined, /undefined/],
  ['a function', () => 1, /function/],
  ['a BigInt', 10n, /JSON/],
  ['a circular object', circular, /JSON/],
  ['a string over maxBodyBytes', 'x'.repeat(1001), /1001 bytes.*maxBodyBytes/],
  ['an object over maxBodyBytes', { text: 'é'.repeat(600) }, /maxBodyBytes/],
];

describe('add rejects bad options, naming the field', () => {
  it.each(badOptions)('%s', async (_, options, field) => {
    await expectNamed(() => q.add('body', options as AddOptions), field, 'ERR_SKYQ_INVALID_OPTION');
  });

  it('takes a delay as a duration string, as every and dedupeMs do, and says what it wants', async () => {
    const before = Date.now();
    const id = await q.add('later', { delay: '5s' });
    const due = (await q.get(id))?.dueAt as number;
    expect(due - before).toBeGreaterThanOrEqual(4000);
    expect(due - Date.now()).toBeLessThanOrEqual(5000);
    expect(await q.reschedule(id, { delay: '1h' })).toBe(true);
    expect(((await q.get(id))?.dueAt as number) - Date.now()).toBeGreaterThan(3_500_000);
    await expect(q.add('x', { delay: 'soon' })).rejects.toThrow(
      'delay: expected a duration with a unit: 500ms, 5s, 2m or 1h (got "soon")',
    );
  });

  it('names the item in addBulk and stores none of the batch', async () => {
    const items = [
      { body: 'fine' },
      { body: 'also fine', options: { group: 3 } },
      { body: 'bad', options: { priority: 1.5 } },
    ];
    const error = await expectNamed(() => q.addBulk(items), 'items[2].options.priority');
    expect(error.message).toMatch(/integer/);
    await expectNamed(
      () => q.addBulk([{ body: 1 }, { body: 2, options: { group: 10 } }]),
      'items[1].options.group',
    );
    // Options beside the body, not in options: refused, not added unnamed under a new id.
    const loose = [{ body: 1 }, { body: 2, name: 'email.send', id: 'mine' }] as { body: Body }[];
    const stray = await expectNamed(() => q.addBulk(loose), 'items[1].name');
    expect(stray.message).toBe(
      'items[1].name: is not a field of an item: give { body, options: { id, name, delay, … } }',
    );
    await expectNamed(
      () => q.addBulk([{ body: 1 }, { body: 2, options: { nope: 1 } as AddOptions }]),
      'nope',
    );
    await expectNamed(() => q.addBulk('x' as never), 'items');
  });

  it('rejects options that are not an object', async () => {
    await expectNamed(() => q.add('body', 5 as AddOptions), 'options');
  });
});

describe('add rejects bodies that cannot be stored', () => {
  it.each(badBodies)('%s', async (_, body, problem) => {
    const error = await expectNamed(() => q.add(body as Body), 'body', 'ERR_SKYQ_BODY');
    expect(error.message).toMatch(problem);
  });

  it('accepts a body of exactly maxBodyBytes', async () => {
    const id = await q.add('y'.repeat(1000), { group: 0 });
    expect((await q.get(id))?.body).toBe('y'.repeat(1000));
    expect(await q.cancel(id)).toBe(true);
  });

  it('names the item whose body is bad', async () => {
    await expectNamed(() => q.addBulk([{ body: 1 }, { body: 2n as never }]), 'items[1].body');
  });
});

describe('other calls check their arguments too', () => {
  it('cancel, reschedule and get reject bad ids and groups', async () => {
    await expectNamed(() => q.cancel(42 as never), 'id');
    await expectNamed(() => q.get({} as never), 'id');
    // Lookups take any member Redis can store: raw members may hold spaces or be empty.
    expect(await q.cancel('a b')).toBe(false);
    expect(await q.get('z'.repeat(300))).toBeNull();
    expect(await q.get(Buffer.from([0xff, 0x00]))).toBeNull();
    await expectNamed(() => q.get('fine', { group: 10 }), 'group');
    await expectNamed(() => q.reschedule('fine', { delay: -5 }), 'delay');
    await expectNamed(() => q.reschedule('fine', { delay: 5, runAt: 5 } as never), 'delay');
    await expectNamed(() => q.reschedule('fine', {}), 'delay');
    await expectNamed(() => q.reschedule('fine', { delay: 5, when: 1 } as never), 'when');
  });

  it('claim, poll, ack, fail and extendLease reject bad groups and numbers', async () => {
    await expectNamed(() => q.claim(10), 'group');
    await expectNamed(() => q.claim(-1), 'group');
    await expectNamed(() => q.claim(0, 0), 'max');
    await expectNamed(() => q.claim(0, 10, Number.NaN), 'leaseMs');
    const notClaimed = { id: 'x', group: 0 } as unknown as Message;
    await expectNamed(() => q.poll(0, { ack: [notClaimed] }), 'messages');
    await expectNamed(() => q.ack([{ ...notClaimed, group: 1.5 } as Message]), 'messages[].group');
    await expectNamed(() => q.ack(['x'] as unknown as Message[]), 'messages[].group');
    await expectNamed(() => q.fail(notClaimed, 'boom'), 'messages');
    await expectNamed(() => q.extendLease([], -1), 'leaseMs');
  });

  it('new Queue rejects bad settings', () => {
    const settings: [Record<string, unknown>, string][] = [
      [{ groups: 0 }, 'groups'],
      [{ scoreUnit: 'min' }, 'scoreUnit'],
      [{ prefix: 'a{b}' }, 'prefix'],
      [{ maxBodyBytes: -1 }, 'maxBodyBytes'],
      [{ attempts: 1.5 }, 'attempts'],
      [{ redis: 'http://x' }, 'redis'],
      [{ colour: 'blue' }, 'colour'],
    ];
    for (const [options, field] of settings) {
      let caught: unknown;
      try {
        new Queue(options as never);
      } catch (error) {
        caught = error;
      }
      expect(caught, field).toBeInstanceOf(SkyqError);
      expect((caught as SkyqError).message).toContain(field);
    }
  });

  it('stores nothing for a rejected add, addBulk or reschedule, on a queue of its own', async () => {
    const own = await openQueue({ redis: server.url }, { maxBodyBytes: 1000 });
    try {
      const kept = await own.add('kept', { group: 2 }); // the id counter and :msg exist already
      await expectNamed(() => own.add('x', { priority: -1 }), 'priority');
      await expectNamed(() => own.add('x'.repeat(1001)), 'body');
      await expectNamed(() => own.addBulk([{ body: 1 }, { body: 2n as never }]), 'items[1].body');
      await expectNamed(() => own.reschedule(kept, { delay: -5 }), 'delay');
      expect((await own.counts()).reduce((sum, c) => sum + c.delayed + c.ready, 0)).toBe(1);
    } finally {
      await own.close();
    }
  });
});
