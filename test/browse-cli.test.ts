// skyq list <state>: a table (or JSON) of one page, the command for the next page, pages
// followed to the end seeing each message once, a prefix, and bad input in one line; done and
// dead newest first unless --order oldest (also in dlq list).
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { SPILL_BYTES } from '../src/queue/spill.js';
import { claimAtLeast } from './helpers/queue.js';
import { runCli, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('skyq list', () => {
  it('prints pages and the command for the next one, each message once', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'lcli', groups: 3 });
    const flags = ['--redis', redis.server.url, '--prefix', 'lcli', '--groups', '3'];
    try {
      const items = Array.from({ length: 25 }, (_, i) => ({
        body: i === 0 ? '<b>\u001b[31mred</b>' : { n: i },
        options: { id: `job-${i}`, delay: 60_000 + i * 10, ...(i === 1 ? { name: 'mail' } : {}) },
      }));
      await queue.addBulk(items);
      const first = await runCli(['list', 'delayed', '--limit', '10', ...flags]);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^id\s+group\s+name\s+due\s+attempts\s+body/m);
      // A body with control characters is printed escaped: it cannot recolour the terminal.
      expect(first.stdout).not.toContain('\u001b');
      expect(first.stdout).toContain('"<b>\\u001b[31mred</b>"');
      expect(first.stdout).toMatch(/^job-1\s+\d\s+mail\s/m);
      const more = new RegExp(
        `more: skyq list delayed --redis ${redis.server.url} --prefix lcli --groups 3 --limit 10 --after (\\S+)`,
      ).exec(first.stdout);
      expect(more).not.toBeNull();

      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const out = await runCli([
          'list',
          'delayed',
          '--limit',
          '10',
          '--json',
          ...(cursor ? ['--after', cursor] : []),
          ...flags,
        ]);
        expect(out.code).toBe(0);
        const parsed = JSON.parse(out.stdout) as { items: { id: string }[]; cursor: string | null };
        seen.push(...parsed.items.map((i) => i.id));
        cursor = parsed.cursor;
        if (!cursor) break;
      }
      expect(seen).toEqual(items.map((i) => i.options.id));

      const filtered = await runCli([
        'list',
        'delayed',
        '--id-prefix',
        'job-2',
        '--json',
        ...flags,
      ]);
      const ids = (JSON.parse(filtered.stdout) as { items: { id: string }[] }).items.map(
        (i) => i.id,
      );
      expect(ids).toEqual(['job-2', 'job-20', 'job-21', 'job-22', 'job-23', 'job-24']);

      const none = await runCli(['list', 'dead', ...flags]);
      expect(none.stdout).toContain('no dead messages on this page');
    } finally {
      await queue.close();
    }
  });

  it('refuses a bad state, limit or cursor in one line', async () => {
    const flags = ['--redis', redis.server.url, '--prefix', 'lcli2'];
    for (const [args, message] of [
      [
        ['list', 'sleeping'],
        'skyq: state: must be one of delayed, ready, active, done, dead, waiting',
      ],
      [['list', 'ready', '--limit', '0'], 'skyq: limit: must be between 1 and 500'],
      [['list', 'ready', '--limit', 'ten'], 'skyq: limit: expected a whole number'],
      [['list', 'done', '--after', 'garbage'], 'skyq: cursor: is not a cursor from a done page'],
    ] as const) {
      const out = await runCli([...args, ...flags]);
      expect(out.code).toBe(1);
      const [line] = out.stderr.trim().split('\n');
      expect(line).toContain(message);
    }
  });

  it('lists done and dead newest first, --order oldest the other way, pages going on in it', async () => {
    const flags = ['--redis', redis.server.url, '--prefix', 'lcli3', '--groups', '2'];
    // Finished a minute ago and since: within the kept history's default age.
    const [seconds] = (await redis.client.time()) as [number, number];
    for (let i = 0; i < 6; i++) {
      const at = Number(seconds) * 1000 - 60_000 + i * 1000;
      await redis.client.zadd(keyOf('lcli3', i % 2, 'done'), at, `d${i}`);
      await redis.client.zadd(keyOf('lcli3', i % 2, 'dead'), at, `x${i}`);
    }
    const ids = (stdout: string, mark: string) =>
      stdout.split('\n').flatMap((line) => (line.startsWith(mark) ? [line.split(/\s+/)[0]] : []));
    const newest = await runCli(['list', 'done', '--limit', '3', ...flags]);
    expect(ids(newest.stdout, 'd')).toEqual(['d5', 'd4', 'd3']);
    const oldest = await runCli(['list', 'done', '--limit', '3', '--order', 'oldest', ...flags]);
    expect(ids(oldest.stdout, 'd')).toEqual(['d0', 'd1', 'd2']);
    // The printed next command goes on oldest first without being told again.
    const cursor = /--after (\S+)/.exec(oldest.stdout)?.[1] as string;
    const next = await runCli(['list', 'done', '--limit', '3', '--after', cursor, ...flags]);
    expect(ids(next.stdout, 'd')).toEqual(['d3', 'd4', 'd5']);
    const dead = await runCli(['dlq', 'list', ...flags]);
    expect(ids(dead.stdout, 'x')).toEqual(['x5', 'x4', 'x3', 'x2', 'x1', 'x0']);
    const deadOldest = await runCli(['dlq', 'list', '--order', 'oldest', ...flags]);
    expect(ids(deadOldest.stdout, 'x')).toEqual(['x0', 'x1', 'x2', 'x3', 'x4', 'x5']);
    for (const args of [
      ['list', 'done', '--order', 'sideways'],
      ['dlq', 'list', '--order', 'sideways'],
    ]) {
      const out = await runCli([...args, ...flags]);
      expect(out.code).toBe(1);
      expect(out.stderr.split('\n')[0]).toBe(
        'skyq: order: must be one of newest, oldest (got "sideways")',
      );
    }
  });

  it("says a done job's big body was not kept, in list and get, never its stub or null", async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'lcli4', groups: 1 });
    const flags = ['--redis', redis.server.url, '--prefix', 'lcli4', '--groups', '1'];
    try {
      await queue.add('z'.repeat(SPILL_BYTES + 10), { id: 'huge' });
      await queue.add(null, { id: 'nothing' });
      await queue.ack(await claimAtLeast(queue, 0, 2));
      const list = await runCli(['list', 'done', ...flags]);
      expect(list.stdout).toMatch(/^huge\s.*\(not kept: over 64 KiB\)$/m);
      const got = await runCli(['get', 'huge', ...flags]);
      expect(got.stdout).toMatch(/^body\s+\(not kept: over 64 KiB\)$/m);
      // A real null body still reads as null.
      const nothing = await runCli(['get', 'nothing', ...flags]);
      expect(nothing.stdout).toMatch(/^body\s+null$/m);
    } finally {
      await queue.close();
    }
  });
});
