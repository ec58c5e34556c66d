// queue.deadLetters refuses a malformed call in one line and changes nothing: a misspelt action
// (act('retyr') purged) or selection key (purge({ id }) purged every dead letter, the unknown
// key being ignored), ids that are no list (a TypeError), unknown page and list options.
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

describe('a dead-letter selection', () => {
  it.each([
    [{ id: 'dead:2' }, 'id'],
    [{ groups: 2 }, 'groups'],
    [{ all: true }, 'all'],
    [{ group: 1, idz: ['dead:1'] }, 'idz'],
  ])('purge(%j) refuses the unknown key and purges nothing', async (selection, field) => {
    await refused(() => queue.deadLetters.purge(selection as never), field, /: unknown option$/);
    await refused(() => queue.deadLetters.retry(selection as never), field, /unknown option/);
    await refused(
      () => queue.deadLetters.act('purge', selection as never),
      field,
      /unknown option/,
    );
  });

  it('refuses a selection that is no object, and a group of the wrong type', async () => {
    for (const selection of ['dead:0', null, ['dead:0'], 3]) {
      await refused(
        () => queue.deadLetters.purge(selection as never),
        'selection',
        /^selection: must be an object/,
      );
    }
    await refused(
      () => queue.deadLetters.purge({ group: '1' } as never),
      'group',
      /^group: must be a group number/,
    );
  });

  it('still acts on a good one', async () => {
    expect(await queue.deadLetters.act('retry', { ids: ['dead:0', 'nope'] })).toEqual({
      count: 1,
      notFound: ['nope'],
    });
    expect(await queue.deadLetters.purge({ group: 1 })).toBe(1);
    expect(await queue.deadLetters.purge({ ids: [] })).toBe(0);
    expect((await queue.deadLetters.list()).map((l) => l.id)).toEqual(['dead:2']);
  });
});

describe('deadLetters.page and list', () => {
  it('refuse unknown options and options that are no object', async () => {
    const page = (options: unknown) => queue.deadLetters.page(options as never);
    const list = (options: unknown) => queue.deadLetters.list(options as never);
    await refused(() => page({ grop: 1 }), 'grop', /^grop: unknown option$/);
    await refused(() => page({ cursor: 'x' }), 'cursor', /unknown option/);
    await refused(() => page({ offset: 1 }), 'offset', /unknown option/);
    await refused(() => page('newest'), 'options', /^options: must be an object/);
    await refused(() => list({ grop: 1 }), 'grop', /^grop: unknown option$/);
    await refused(() => list({ after: 'x' }), 'after', /unknown option/);
    await refused(() => list(null), 'options', /^options: must be an object/);
    await refused(() => list({ limit: '5' }), 'limit', /^limit: /);
  });

  it('still read with good options', async () => {
    expect((await queue.deadLetters.page({ group: 2, order: 'oldest' })).letters).toHaveLength(1);
    expect(await queue.deadLetters.list({ limit: 2, previewBytes: 3 })).toHaveLength(2);
  });
});
