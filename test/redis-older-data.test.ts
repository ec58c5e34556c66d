/**
 * A Redis brought back from an older copy of its data: a restart from an older RDB snapshot
 * (or a lagging replica promoted). The dataset tags are older than the copy, so they stay;
 * before, nothing said that the messages added since the snapshot were gone (50 of 100 adds
 * lost, no log line, /healthz ok). Now the groups' counters going back tell it.
 * And a loss the 5 s tag reading finds without a reconnect (FLUSHALL) reaches the checks'
 * listeners at once, so `skyq stats` shows it (before: at the next full check, up to 30 s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { DatasetTags, describeLoss } from '../src/runtime/dataset-tags.js';
import { ServerChecks, type ServerState } from '../src/runtime/server-checks.js';
import { freshPrefix } from './helpers/queue.js';
import { heldPort, startStandalone } from './helpers/redis.js';
import { waitFor } from './helpers/runtime.js';

const dir = mkdtempSync(join(tmpdir(), 'skyq-older-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a server restarted from an older snapshot', () => {
  it('is told as a loss of what came after the snapshot, and normal work is not', async () => {
    const port = await heldPort();
    let server = await startStandalone({ port, dir });
    const prefix = freshPrefix('older');
    const options = { redis: server.url, prefix, groups: 2 };
    const addSome = async (tag: string) => {
      const queue = new Queue(options); // a fresh producer reserves fresh ids
      await queue.addBulk(
        Array.from({ length: 20 }, (_, i) => ({
          body: `${tag} ${i}`,
          options: { delay: 60_000, group: i % 2 },
        })),
      );
      await queue.close();
    };
    const plain = new Redis(server.url);
    const tags = new DatasetTags(plain, prefix, [0, 1]);
    try {
      expect(await tags.check()).toEqual([]);
      await addSome('kept');
      expect(await tags.check()).toEqual([]); // counters that grow are no loss
      await plain.save();
      await addSome('after the snapshot');
      expect(await tags.check()).toEqual([]);
      process.kill(server.pid, 'SIGKILL');
      server = await startStandalone({ port, dir }); // loads the snapshot's dump.rdb
      const losses = await (async () => {
        for (;;) {
          try {
            return await tags.check();
          } catch {
            await new Promise((r) => setTimeout(r, 100)); // still reconnecting
          }
        }
      })();
      expect(losses).toHaveLength(1);
      expect(losses[0]).toMatchObject({ groups: [0, 1], older: true });
      expect(losses[0]?.before).toMatchObject({ delayed: 40 });
      expect(describeLoss(losses[0] as never, prefix)).toMatch(
        new RegExp(
          `^Redis at 127\\.0\\.0\\.1:${port} came back with older data than skyq had written \\(prefix ${prefix}: an older backup or a replica that lagged\\); at the last reading .* its groups 0,1 held 40 delayed, 0 ready, 0 leased and 0 dead messages; what its groups 0,1 took since that copy was made is gone`,
        ),
      );
      expect(await tags.check()).toEqual([]); // said once
    } finally {
      plain.disconnect();
      await server.stop();
    }
  });
});

describe('a FLUSHALL found by the tag reading', () => {
  it('reaches the listeners (what skyq stats shows) with that reading', async () => {
    const server = await startStandalone();
    const plain = new Redis(server.url);
    const lines: string[] = [];
    const checks = new ServerChecks(plain, {
      allowEviction: false,
      report: (note) => lines.push(note.line),
      dataset: { prefix: freshPrefix('flushed'), groups: [0, 1] },
    });
    let told: ServerState[] = [];
    try {
      await checks.check();
      checks.watch();
      checks.onChange((states) => {
        told = states;
      });
      await plain.flushall();
      await waitFor('the loss told to the listeners', () => told[0]?.dataLost, 8000);
      expect(told[0]).toMatchObject({ dataLostTotal: 1, dataLost: { groups: [0, 1] } });
      expect(lines.filter((line) => line.includes("without skyq's data"))).toHaveLength(1);
    } finally {
      checks.stop();
      plain.disconnect();
      await server.stop();
    }
  });
});
