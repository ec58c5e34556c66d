/**
 * Named jobs: `add(body, { name })` travels with the message (get, job.name), a command table
 * handler routes on it (named exports or a default object, '*' for the rest, on the pool too),
 * a name nobody handles is a dead letter with that reason (not retried) that a dead-letter
 * retry after deploying the handler runs, and per-name figures reach launcher.stats().
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MetricsExporter } from '../src/http/metrics.js';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { fixture, recorded, runCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('named jobs', () => {
  for (const pool of [0, 1]) {
    it(`route by name; no handler → dead letter, run after a deploy and a retry (pool ${pool})`, async () => {
      const list = 'fixture:named';
      await redis.client.del(list);
      const where = { redis: redis.server.url, prefix: `named${pool}`, groups: 2, attempts: 3 };
      const queue = new Queue(where);
      await queue.ready();
      const emails = await queue.addBulk(
        Array.from({ length: 5 }, (_, i) => ({ body: { i }, options: { name: 'email.send' } })),
      );
      const sms = await queue.add('hi', { name: 'sms.send' });
      const report = await queue.add({ month: 11 }, { name: 'report.build' });
      const unnamed = await queue.add('plain');
      expect(await queue.get(report)).toMatchObject({ name: 'report.build', state: 'ready' });
      const options = { ...where, logDir: tempDir(), ...(pool ? { pool } : {}) };
      let launcher = await startActors({ ...options, handler: fixture('commands-v1.mjs') });
      try {
        const letters = await waitFor('two dead letters', async () => {
          const found = await queue.deadLetters.list();
          return found.length === 2 ? found : undefined;
        });
        const byId = new Map(letters.map((letter) => [letter.id, letter]));
        // Not retried: one delivery, although three attempts were allowed.
        expect(byId.get(report)).toMatchObject({
          reason: 'no handler for "report.build"',
          attempts: 1,
          name: 'report.build',
        });
        expect(byId.get(unnamed)).toMatchObject({ reason: 'no handler for unnamed jobs' });
        await waitFor('the routed ones', async () =>
          (await redis.client.llen(list)) >= 6 ? true : undefined,
        );
        expect((await recorded(redis.client, list)).sort()).toEqual(
          [...emails.map((id) => `email.send/email.send ${id}`), `sms.send/sms.send ${sms}`].sort(),
        );
        // The handler records before it returns; the actor counts the job once it is done.
        const names = await waitFor('per-name figures of the routed ones', async () => {
          const found = (await launcher.stats()).totals.names;
          const count = (name: string) => {
            const n = found.find((f) => f.name === name);
            return n ? n.done + n.failed : 0;
          };
          const all = count('email.send') >= 5 && count('sms.send') >= 1;
          return all && count('report.build') >= 1 ? found : undefined;
        });
        expect(names.find((n) => n.name === 'email.send')).toMatchObject({ done: 5, failed: 0 });
        expect(names.find((n) => n.name === 'report.build')).toMatchObject({ done: 0, failed: 1 });
        expect(names.find((n) => n.name === 'email.send')?.summary.count).toBe(5);
        if (!pool) {
          // /metrics: a name label on done, failed and the handler histogram; the series of
          // each group still add up to its actor's counts.
          const stats = await launcher.stats();
          const text = await new MetricsExporter(async () => ({ stats, counts: null })).render();
          const value = (pattern: RegExp) =>
            [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
          expect(value(/^skyq_messages_done_total\{group="\d",name="email\.send"\} (\d+)$/gm)).toBe(
            5,
          );
          expect(
            value(/^skyq_messages_failed_total\{group="\d",name="report\.build"\} (\d+)$/gm),
          ).toBe(1);
          expect(value(/^skyq_messages_done_total\{group="\d"\} (\d+)$/gm)).toBe(0);
          expect(value(/^skyq_messages_failed_total\{group="\d"\} (\d+)$/gm)).toBe(1);
          expect(
            value(/^skyq_handler_duration_seconds_count\{group="\d",name="sms\.send"\} (\d+)$/gm),
          ).toBe(1);
        }
      } finally {
        await launcher.stop();
      }
      // The deploy: a table with 'report.build' and '*'; the dead letters go back to work.
      launcher = await startActors({ ...options, handler: fixture('commands-v2.mjs') });
      try {
        expect(await queue.deadLetters.retry()).toBe(2);
        await waitFor('the retried ones', async () =>
          (await redis.client.llen(list)) >= 8 ? true : undefined,
        );
        const all = await recorded(redis.client, list);
        expect(all).toContain(`report.build/report.build ${report}`);
        expect(all).toContain(`*/- ${unnamed}`);
        expect(all).toHaveLength(8);
        expect(await queue.deadLetters.list()).toEqual([]);
      } finally {
        await launcher.stop();
        await queue.close();
      }
    });
  }

  it('skyq produce --name and --json "name"; skyq get shows it', async () => {
    const flags = ['--redis', redis.server.url, '--prefix', 'namedcli', '--groups', '2'];
    const plain = await runCli(
      ['produce', ...flags, '--name', 'email.send', '--delay', '1h'],
      'a\n',
    );
    expect(plain.code).toBe(0);
    const json = await runCli(
      ['produce', ...flags, '--json', '--delay', '1h'],
      '{"body":{"x":1},"name":"report.build"}\n{"body":1,"name":""}\n',
    );
    expect(json.code).toBe(1);
    expect(json.stderr).toContain('name: must be a non-empty string');
    const [, first] = /^added (\S+)$/m.exec(plain.stdout) ?? [];
    const [, second] = /^added (\S+)$/m.exec(json.stdout) ?? [];
    expect((await runCli(['get', ...flags, first as string])).stdout).toMatch(
      /^name +email\.send$/m,
    );
    expect((await runCli(['get', ...flags, second as string])).stdout).toMatch(
      /^name +report\.build$/m,
    );
    const bad = await runCli(['produce', ...flags, '--name', 'a\tb'], 'x\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('name: must be printable text');
  });
});

describe('a command table with an entry named then', () => {
  // A module namespace with a `then` export is a thenable: a promise resolved with it calls that
  // export instead of resolving, and the launcher's start hung for 15 s, then failed.
  const modules: [string, string][] = [
    [
      'then-table.mjs',
      "export const then = async () => 'then ran';\nexport const ok = async () => 'ok ran';\n",
    ],
    [
      'then-table.cjs',
      "module.exports = { then: async () => 'then ran', ok: async () => 'ok ran' };\n",
    ],
  ];
  for (const pool of [0, 1]) {
    it(`starts and routes jobs named then and ok, ES module and CommonJS (pool ${pool})`, async () => {
      const dir = tempDir();
      for (const [file, source] of modules) {
        writeFileSync(join(dir, file), source);
        const where = { redis: redis.server.url, prefix: `then${pool}${file}`, groups: 1 };
        const queue = new Queue(where);
        const ids = [await queue.add(1, { name: 'then' }), await queue.add(2, { name: 'ok' })];
        const options = {
          ...where,
          logDir: dir,
          handler: join(dir, file),
          ...(pool ? { pool } : {}),
        };
        const launcher = await startActors(options);
        try {
          const results = await waitFor(`${file}'s two jobs done`, async () => {
            const infos = await Promise.all(ids.map((id) => queue.get(id)));
            return infos.every((info) => info?.state === 'done')
              ? infos.map((i) => i?.result)
              : undefined;
          });
          expect(results).toEqual(['then ran', 'ok ran']);
        } finally {
          await launcher.stop();
          await queue.close();
        }
      }
    });
  }
});
