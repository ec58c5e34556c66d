/**
 * A Redis that forgets (issue 25, part 1), on real redis-server processes:
 * - generated ids are never generated again, after a FLUSHALL, a restart without persistence
 *   or a counter put back by an older backup (before: the counters started again from 0, and
 *   9,151 ids of a fault probe ran twice with different bodies);
 * - when a server comes back without skyq's data, every launcher and the stand-alone
 *   dashboard say so once (one error line naming the server, how long it was away and what it
 *   held), and so do /healthz (degraded), /metrics (skyq_redis_data_lost_total), `skyq stats`
 *   and the dashboard's overview (before: only "Redis unreachable" and "Redis back").
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { serveDashboard } from '../src/http/index.js';
import { Queue, startActors } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { heldPort, startStandalone } from './helpers/redis.js';
import { removeTempDirs, runCli, tempDir, waitFor } from './helpers/runtime.js';

afterAll(removeTempDirs);

const many = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ body: `${tag} ${i}`, options: { delay: 3_600_000 } }));

describe('generated ids', () => {
  it('are never generated again: after FLUSHALL, an empty restart, an older counter', async () => {
    const port = await heldPort();
    let server = await startStandalone({ port });
    const options = { prefix: freshPrefix('ids'), groups: 3 };
    const seen = new Set<string>();
    const addSome = async (tag: string) => {
      const queue = new Queue({ redis: server.url, ...options });
      const ids = await queue.addBulk(many(3000, tag));
      await queue.close();
      for (const id of ids) {
        expect(seen.has(id), `${id} (${tag}) was generated before`).toBe(false);
        seen.add(id);
      }
    };
    try {
      await addSome('first');
      const plain = new Redis(server.url);
      const seqs = await Promise.all(
        [0, 1, 2].map((g) => plain.get(keyOf(options.prefix, g, 'seq'))),
      );
      await addSome('second');
      // A backup taken after the first adds comes back: the counters go back to then.
      for (const [g, value] of seqs.entries())
        await plain.set(keyOf(options.prefix, g, 'seq'), value as string);
      await addSome('after a restore');
      await plain.flushall();
      plain.disconnect();
      await addSome('after FLUSHALL');
      process.kill(server.pid, 'SIGKILL');
      server = await startStandalone({ port }); // no persistence: empty
      await addSome('after an empty restart');
      expect(seen.size).toBe(15_000);
    } finally {
      await server.stop();
    }
  });
});

/** The launcher log's lines of one event, parsed. */
function logLines(dir: string, event: string): { msg: string; level: number }[] {
  return readFileSync(join(dir, 'launcher.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((line) => line.event === event);
}

describe('a server that comes back without skyq data', () => {
  it('is told once by every launcher and the dashboard, in every view', async () => {
    const port = await heldPort();
    let server = await startStandalone({ port });
    const options = { redis: server.url, prefix: freshPrefix('lost'), groups: 2 };
    const dirs = [tempDir(), tempDir()];
    const launchers = await Promise.all(
      dirs.map((logDir) => startActors({ ...options, logDir, http: { listen: '127.0.0.1:0' } })),
    );
    const board = await serveDashboard(options, { listen: '127.0.0.1:0' });
    const queue = new Queue(options);
    try {
      await queue.addBulk(many(40, 'held'));
      await sleep(5500); // a reading of the tags and depths after the adds (every 5 s)
      process.kill(server.pid, 'SIGKILL');
      await sleep(1500);
      server = await startStandalone({ port });
      for (const dir of dirs) {
        await waitFor(
          'the launcher says it',
          () => logLines(dir, 'data-lost').length > 0 || undefined,
          20_000,
        );
      }
      await sleep(6000); // later checks must not say it again
      for (const dir of dirs) {
        const lines = logLines(dir, 'data-lost');
        expect(lines).toHaveLength(1);
        expect(lines[0]?.level).toBe(50); // error
        expect(lines[0]?.msg).toMatch(
          new RegExp(
            `^Redis at 127\\.0\\.0\\.1:${port} came back without skyq's data \\(prefix ${options.prefix}\\) after being away [\\d.]+ s; at the last reading \\(.+\\) its groups 0,1 held 40 delayed, 0 ready, 0 leased and 0 dead messages, now gone`,
          ),
        );
      }
      for (const launcher of launchers) {
        const url = launcher.http?.url as string;
        const health = await (await fetch(new URL('/healthz', url))).json();
        expect(health.status).toBe('degraded');
        expect(health.warnings[0]).toMatch(/came back without skyq's data/);
        const metrics = await (await fetch(new URL('/metrics', url))).text();
        expect(metrics).toContain(`skyq_redis_data_lost_total{server="127.0.0.1:${port}"} 1`);
      }
      const overview = await (await fetch(new URL('/api/overview', board.url))).json();
      expect(overview.servers[0].dataLost).toMatchObject({ groups: [0, 1] });
      const stats = await runCli([
        'stats',
        '--redis',
        server.url,
        '--prefix',
        options.prefix,
        '--groups',
        '2',
      ]);
      expect(stats.stdout).toMatch(/came back without skyq's data at .* \(groups 0,1; 1 time/);
    } finally {
      await queue.close();
      await board.close();
      await Promise.all(launchers.map((l) => l.stop()));
      await server.stop();
    }
  });
});
