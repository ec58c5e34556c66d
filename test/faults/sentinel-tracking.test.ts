/**
 * Client tracking across a SENTINEL FAILOVER: the launcher's watcher (keyspace notifications
 * off) arms its idle groups on a tracking connection, and a raw `ZADD` of another program is
 * announced to it at once. After the failover the old master stays up as a replica: were the
 * tracker's two connections left on it, no write on the new master would ever be announced,
 * and raw members would wait for the once-a-second safety read (about 0.5 s on average, up to
 * 1 s). They are not left there: Sentinel drops the old master's clients as it demotes it
 * (+convert-to-slave, some 10 s after naming the new master; until then every skyq connection
 * stays on the old master, which still takes writes), and each reconnect finds the new master.
 * Measured once the failover is over: raw overdue members ZADDed to idle groups of the NEW
 * master, one every GAP_MS, a group's turn coming again only once it is armed anew (GROUPS ×
 * GAP_MS past the 1 s quiet time), so each one is an announcement's work; each start is timed
 * from the member's due time (= when it was added). p99 ≤ 100 ms, every member started once,
 * and the new master, not the old one, holds the tracking reader (what makes it prompt rather
 * than a lucky safety read). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import { percentile, readStarts, type Start } from '../helpers/intake.js';
import { redisNow } from '../helpers/queue.js';
import { type RedisServerHandle, startStandalone } from '../helpers/redis.js';
import { FIXTURE_ENV, fixture, removeTempDirs, tempDir, waitFor } from '../helpers/runtime.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from './helpers/sentinel.js';

const PREFIX = 'st';
const GROUPS = 10;
const MEMBERS = 30;
/** Between two raw members; a group's next turn is GROUPS × GAP_MS = 1.2 s later. */
const GAP_MS = 120;
/** Quiet this long, every group is armed (1 s quiet, then the next 50 ms tick arms it). */
const SETTLE_MS = 2500;
const P99_MS = 100;

let setup: SentinelSetup;
let recorder: RedisServerHandle;
let record: Redis;

beforeAll(async () => {
  [setup, recorder] = await Promise.all([startSentinels(), startStandalone()]);
  record = new Redis(recorder.url);
  process.env[FIXTURE_ENV] = recorder.url;
});

afterAll(async () => {
  record?.disconnect();
  await Promise.all([setup?.stop(), recorder?.stop()]);
  removeTempDirs();
});

/** A plain connection to one of the setup's servers (not through the sentinels). */
function direct(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, password: setup.password });
  client.on('error', () => undefined);
  return client;
}

/** The server's connections named skyq-tracking-read that have CLIENT TRACKING on. */
async function trackingReaders(client: Redis): Promise<number> {
  const list = (await client.client('LIST')) as string;
  return list.split('\n').filter((line) => /name=skyq-tracking-read .*flags=\w*t/.test(line))
    .length;
}

describe('client tracking across a Sentinel failover', () => {
  it('raw ZADDs on the new master are announced: p99 start ≤ 100 ms, none lost', async () => {
    const sentinel = {
      nodes: setup.sentinels,
      master: MASTER_NAME,
      password: setup.password,
      sentinelPassword: setup.sentinelPassword,
    };
    const oldMaster = direct(setup.master.port);
    const newMaster = direct(setup.replica.port);
    const logDir = tempDir();
    let launcher: Launcher | undefined;
    try {
      launcher = await startActors({
        sentinel,
        prefix: PREFIX,
        groups: GROUPS,
        handler: fixture('starts.mjs'),
        logDir,
        publishStats: false,
        keyspaceEvents: 'off',
      });
      await sleep(SETTLE_MS);
      expect(await trackingReaders(oldMaster)).toBe(1);

      const faultAt = Date.now();
      await setup.ask('SENTINEL', 'FAILOVER', MASTER_NAME);
      await waitFor(
        'Sentinel to name the replica as master',
        async () => ((await setup.masterPort()) === setup.replica.port ? true : undefined),
        30_000,
        20,
      );
      const switchMs = Date.now() - faultAt;
      // Finished: the old master is a replica of the new one, still up, in sync. Meanwhile:
      // when the tracker's reader left it (Sentinel drops its clients as it demotes it).
      let leftMs: number | null = null;
      await waitFor(
        'the old master to replicate the new one',
        async () => {
          if (leftMs === null && (await trackingReaders(oldMaster)) === 0)
            leftMs = Date.now() - faultAt;
          const info = await oldMaster.info('replication');
          return /role:slave/.test(info) && /master_link_status:up/.test(info) ? true : undefined;
        },
        30_000,
        50,
      );
      const syncedMs = Date.now() - faultAt;
      await sleep(SETTLE_MS);
      const [trackingNew, trackingOld] = await Promise.all([
        trackingReaders(newMaster),
        trackingReaders(oldMaster),
      ]);

      const added: { id: string; due: number }[] = [];
      for (let i = 0; i < MEMBERS; i++) {
        const id = `raw-${i}`;
        const due = await redisNow(newMaster);
        await newMaster.zadd(`${PREFIX}:${i % GROUPS}`, due, id);
        added.push({ id, due });
        await sleep(GAP_MS);
      }
      // Lost ones are named below, not by this wait's time-out.
      await waitFor(
        'every raw member to start',
        async () => {
          const all = await readStarts(record);
          return added.every(({ id }) => all.some((s) => s.id === id)) ? true : undefined;
        },
        10_000,
        50,
      ).catch(() => undefined);
      await sleep(300); // a duplicate start would show by now
      const byId = new Map<string, Start[]>();
      for (const start of await readStarts(record)) {
        byId.set(start.id, [...(byId.get(start.id) ?? []), start]);
      }
      const latencies = added.flatMap(({ id, due }) => {
        const first = byId.get(id)?.[0];
        return first ? [first.startedAt - due] : [];
      });
      const figures = {
        switchMs,
        syncedMs,
        leftMs,
        trackingNew,
        trackingOld,
        started: latencies.length,
        p50: Math.round(percentile(latencies, 50)),
        p99: Math.round(percentile(latencies, 99)),
        max: Math.round(Math.max(...latencies)),
      };
      console.log(`sentinel tracking: ${JSON.stringify(figures)}`);
      const lost = added.filter(({ id }) => !byId.has(id)).map(({ id }) => id);
      const twice = added.filter(({ id }) => (byId.get(id)?.length ?? 0) > 1).map(({ id }) => id);
      expect(lost).toEqual([]);
      expect(twice).toEqual([]);
      expect(trackingNew).toBe(1);
      expect(trackingOld).toBe(0);
      expect(figures.p99).toBeLessThanOrEqual(P99_MS);
    } finally {
      await launcher?.stop(1000);
      oldMaster.disconnect();
      newMaster.disconnect();
    }
    // What the launcher logged (a connection's trouble included) names no password.
    const logs = readdirSync(logDir, { recursive: true, withFileTypes: true })
      .filter((file) => file.isFile())
      .map((file) => readFileSync(join(file.parentPath, file.name), 'utf8'));
    expect(logs.join('').length).toBeGreaterThan(0);
    for (const text of logs) {
      expect(text).not.toContain(setup.password);
      expect(text).not.toContain(setup.sentinelPassword);
    }
  });
});
