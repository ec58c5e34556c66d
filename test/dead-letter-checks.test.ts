// queue.deadLetters refuses a malformed call in one line and changes nothing: a misspelt action
// (act('retyr') purged), ids that are no list (a TypeError).
import { beforeEach, describe, expect, it } from 'vitest';
import { type Message, type Queue, SkyqError } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
let queue: Queue;
let ids: string[];

/** One dead letter in each of three groups. */
beforeEach(async () => {
  queue = await redis.queue({ groups: 3 });
  ids = [];
  for (const group of [0, 1, 2]) {
    ids.push(await queue.add(`body ${group}`, { id: `dead:${group}`, group, attempts: 1 }));
    const [message] = await queue.claim(group, 1, 10_000);
    expect(await queue.fail(message as Message, new Error('boom'))).toBe('dead');
  }
});

/** The call throws one SkyqError line naming `field`; every dead letter is still there. */
async function refused(call: () => Promise<unknown>, field: string, message: RegExp) {
  const error = await call().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SkyqError);
  expect((error as SkyqError).field).toBe(field);
  expect((error as SkyqError).message).toMatch(message);
  expect((error as SkyqError).message).not.toContain('\n');
  const left = (await queue.deadLetters.list()).map((l) => l.id).sort();
  expect(left).toEqual(ids);
}

describe('deadLetters.act', () => {
  it.each(['retyr', 'Retry', 'delete', undefined, 'oops'])(
    'refuses the action %s, with or without ids',
    async (action) => {
      const act = queue.deadLetters.act.bind(queue.deadLetters) as (
        a: unknown,
        s?: unknown,
      ) => Promise<unknown>;
      const message = /^action: must be 'retry' or 'purge'/;
      await refused(() => act(action, { ids: [ids[0]] }), 'action', message);
      await refused(() => act(action, {}), 'action', message);
      await refused(() => act(action), 'action', message);
    },
  );

  it('refuses ids that are no list of ids', async () => {
    const act = (selection: unknown) => queue.deadLetters.act('purge', selection as never);
    await refused(() => act({ ids: 'abc' }), 'ids', /^ids: must be a list of ids/);
    await refused(() => act({ ids: ids[0] }), 'ids', /^ids: must be a list of ids/);
    await refused(() => act({ ids: [ids[0], 7] }), 'ids[1]', /^ids\[1\]: must be a string/);
    await refused(() => act({ ids: null }), 'ids', /^ids: must be a list of ids/);
  });
});
