/**
 * Flows from the CLI: `skyq get` shows a child's parent and a parent's children (counted by
 * state, then one line each); `skyq list waiting` pages waiting parents; `skyq cancel` of a
 * child its parent waits for is refused in one line, of the parent takes its children.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { runCli } from './helpers/runtime.js';

let server: RedisServerHandle;
let queue: Queue;

beforeAll(async () => {
  server = await startStandalone();
  queue = new Queue({ redis: server.url, prefix: 'flowcli', groups: 2 });
  await queue.ready();
});

afterAll(async () => {
  await queue?.close();
  await server?.stop();
});

it('get, list waiting and cancel show and act on a flow', async () => {
  const where = ['--redis', server.url, '--prefix', 'flowcli', '--groups', '2'];
  const ids = await queue.flows.add({
    body: 'report',
    name: 'report',
    options: { group: 1 },
    children: [
      { body: 'a', name: 'fetch', options: { delay: 60_000 } },
      { body: 'b', optional: true, options: { delay: 60_000 } },
    ],
  });
  const [a, b] = ids.children.map((child) => child.id) as [string, string];

  const parent = await runCli(['get', ids.id, ...where]);
  expect(parent.code, parent.stderr).toBe(0);
  expect(parent.stdout).toMatch(/state\s+waiting/);
  expect(parent.stdout).toMatch(/children\s+2: 2 delayed/);
  expect(parent.stdout).toContain(`- ${a}  delayed  fetch`);
  expect(parent.stdout).toContain(`- ${b}  delayed  (optional)`);
  const child = await runCli(['get', a, ...where]);
  expect(child.stdout).toMatch(new RegExp(`parent\\s+${ids.id} \\(group 1\\)`));
  const json = JSON.parse((await runCli(['get', ids.id, ...where, '--json'])).stdout);
  expect(json.children).toMatchObject({ total: 2, delayed: 2 });
  expect(json.childList.map((c: { id: string }) => c.id)).toEqual([a, b]);

  const waiting = await runCli(['list', 'waiting', ...where]);
  expect(waiting.code, waiting.stderr).toBe(0);
  expect(waiting.stdout).toContain(ids.id);

  const refused = await runCli(['cancel', a, ...where]);
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim()).toBe(
    `skyq: cancel ${a}: its flow parent ${ids.id} waits for it; cancel the parent (its pending children go with it), or add the child with optional: true`,
  );
  const cancelled = await runCli(['cancel', ids.id, ...where]);
  expect(cancelled.stdout).toContain(`cancelled ${ids.id}\n`);
  for (const id of [ids.id, a, b]) expect(await queue.get(id)).toBeNull();
});

it("get lists a big parent's first children, says how many more, and --children lists them all", async () => {
  const where = ['--redis', server.url, '--prefix', 'flowcli', '--groups', '2'];
  const children = Array.from({ length: 30 }, (_, i) => ({ body: i, options: { delay: 60_000 } }));
  const ids = await queue.flows.add({ body: 'big', children });
  const first = await runCli(['get', ids.id, ...where]);
  expect(first.stdout.match(/^ +- \S+ +delayed$/gm)).toHaveLength(20);
  expect(first.stdout).toMatch(/… and 10 more \(--children lists them all\)$/m);
  const all = await runCli(['get', ids.id, ...where, '--children']);
  expect(all.stdout.match(/^ +- \S+ +delayed$/gm)).toHaveLength(30);
  expect(all.stdout).not.toContain('more');
  const json = JSON.parse((await runCli(['get', ids.id, ...where, '--children', '--json'])).stdout);
  expect(json.childList).toHaveLength(30);
  await queue.cancel(ids.id);
});
