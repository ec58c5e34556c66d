// skyq events: human lines by default, JSON lines with cursors, --from a cursor, --group,
// --follow until stopped, and a bad option in one line.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Message, Queue } from '../src/index.js';
import { runCli, spawnCli, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const PREFIX = 'evcli';
let queue: Queue;
const args = () => ['--redis', redis.server.url, '--prefix', PREFIX, '--groups', '2'];

beforeAll(async () => {
  queue = new Queue({ redis: redis.server.url, prefix: PREFIX, groups: 2, events: true });
  await queue.add({ n: 1 }, { id: 'order:1', group: 0, name: 'order.cancel' });
  await queue.add({ n: 2 }, { id: 'order:2', group: 1 });
  await sleep(5); // the start comes a few ms after both adds: the time order is known
  const [m] = await queue.claim(0, 1);
  await queue.ack([m as Message]);
});
afterAll(async () => queue?.close());

describe('skyq events', () => {
  it('prints what the streams keep as lines, in time order over the groups, and ends', async () => {
    const out = await runCli(['events', ...args()]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^reading redis:/);
    expect(lines.slice(1).map((l) => l.replace(/^\S+ {2}/, ''))).toEqual([
      'g0  added        order:1  order.cancel',
      'g1  added        order:2',
      'g0  started      order:1  order.cancel',
      'g0  done         order:1  order.cancel',
    ]);
  });

  it('--json gives each event its cursor; --from reads on after it; --group filters', async () => {
    const out = await runCli(['events', '--json', ...args()]);
    const events = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['added', 'added', 'started', 'done']);
    const after = await runCli(['events', '--json', '--from', events[1].cursor, ...args()]);
    expect(
      after.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
    ).toEqual(['started', 'done']);
    const one = await runCli(['events', '--group', '1', ...args()]);
    expect(one.stdout.trim().split('\n').slice(1)).toHaveLength(1);
    const bad = await runCli(['events', '--from', 'yesterday', ...args()]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')[0]).toMatch(/^skyq: from: must be 'now', 'start'/);
  });

  it('--follow prints new events until stopped', async () => {
    const run = spawnCli(['events', '--follow', ...args()]);
    try {
      await waitFor('the reading line', () =>
        run.stdout().includes('reading') ? true : undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await queue.add('late', { id: 'order:3', group: 1, name: 'late.one' });
      await waitFor('the new event', () =>
        run.stdout().includes('added        order:3  late.one') ? true : undefined,
      );
    } finally {
      run.child.kill('SIGINT');
    }
    const result = await run.done;
    expect(result.stdout).not.toContain('order:1'); // --follow starts from now
  });
});
