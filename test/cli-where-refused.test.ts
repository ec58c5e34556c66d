// The Redis a command read or wrote to comes first even when the answer is a miss or a
// refusal: a `get` of an id that is not there, or a `cancel` a flow refuses, is exactly when
// a wrong server (a shared one on 6379 in place of the one meant) must not pass unseen.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { runCli } from './helpers/runtime.js';

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startStandalone();
});

afterAll(async () => {
  await server?.stop();
});

it('get of a missing id and a refused cancel say first which Redis they used', async () => {
  const where = ['--redis', server.url, '--prefix', 'refused', '--groups', '2'];
  const queue = new Queue({ redis: server.url, prefix: 'refused', groups: 2 });
  try {
    await queue.flows.add({
      body: 'parent',
      options: { id: 'parent', group: 0 },
      children: [{ body: 'child', options: { id: 'child', group: 1, delay: '1h' } }],
    });
  } finally {
    await queue.close();
  }
  const missing = await runCli(['get', 'no-such-id', ...where]);
  expect(missing.code).toBe(1);
  expect(missing.stdout.split('\n')[0]).toBe(`reading ${server.url}`);
  expect(missing.stderr).toContain('skyq: no message no-such-id');
  // --json prints JSON only: a miss leaves stdout empty.
  const json = await runCli(['get', 'no-such-id', '--json', ...where]);
  expect([json.code, json.stdout]).toEqual([1, '']);

  const refused = await runCli(['cancel', 'child', ...where]);
  expect(refused.code).toBe(1);
  expect(refused.stdout.split('\n')[0]).toBe(`writing to ${server.url}`);
  expect(refused.stderr).toContain('skyq: cancel child: its flow parent parent waits for it');
});
