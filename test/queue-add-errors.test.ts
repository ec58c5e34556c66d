/**
 * One add() that Redis refuses rejects with that refusal's own error (ERR_SKYQ_AUTH,
 * ERR_SKYQ_REDIS, …), not addBulk's "1 of 1 items were not added"; addBulk keeps AddBulkError.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AddBulkError, Queue, SkyqError } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';

let server: RedisServerHandle;
const PASSWORD = 'right-horse-battery';

beforeAll(async () => {
  server = await startStandalone({ password: PASSWORD });
});

afterAll(async () => {
  await server?.stop();
});

async function rejection(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

it('a refused login: add() throws ERR_SKYQ_AUTH, addBulk() an AddBulkError', async () => {
  const url = new URL(server.url);
  url.password = 'wrong-password';
  const queue = new Queue({ redis: url.toString(), prefix: freshPrefix('adderr'), failFast: true });
  try {
    const single = await rejection(() => queue.add('hello'));
    expect(single).toBeInstanceOf(SkyqError);
    expect(single).not.toBeInstanceOf(AddBulkError);
    expect((single as SkyqError).code).toBe('ERR_SKYQ_AUTH');
    expect((single as Error).message).toMatch(/refused the login/);
    expect((single as Error).message).not.toMatch(/addBulk|items were not added/);
    expect((single as Error).message).not.toContain('wrong-password');

    const bulk = await rejection(() => queue.addBulk([{ body: 'a' }, { body: 'b' }]));
    expect(bulk).toBeInstanceOf(AddBulkError);
    expect((bulk as AddBulkError).code).toBe('ERR_SKYQ_PARTIAL_ADD');
  } finally {
    await queue.close();
  }
});

it('a key of the wrong type: add() throws ERR_SKYQ_REDIS with the WRONGTYPE reply', async () => {
  const prefix = freshPrefix('adderr');
  const raw = new Redis(server.url);
  await raw.set(`${prefix}:0`, 'not a sorted set');
  const queue = new Queue({ redis: server.url, prefix, groups: 1 });
  try {
    const single = await rejection(() => queue.add('hello', { group: 0 }));
    expect(single).toBeInstanceOf(SkyqError);
    expect(single).not.toBeInstanceOf(AddBulkError);
    expect((single as SkyqError).code).toBe('ERR_SKYQ_REDIS');
    expect((single as Error).message).toMatch(/^WRONGTYPE/);
  } finally {
    await queue.close();
    raw.disconnect();
  }
});
