/**
 * SENTINEL FAILOVER while messages flow: a password-protected master with one replica, three
 * password-protected sentinels; a long-lived `Queue`, a `skyq produce` reading stdin and the
 * actors all connect through the sentinels (`sentinel: { nodes, master }`, `--sentinel …
 * --sentinel-master …`). The replica is promoted and the old master turned into its replica;
 * everyone must find the new master by themselves. In flight: the leased messages, read right
 * before the failover. Every acknowledged id is counted: 0 lost, duplicates ≤ in flight, and
 * adds are acknowledged again within RESUME_MS of Sentinel naming the new master.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import { type RedisServerHandle, startStandalone } from '../helpers/redis.js';
import { finish, removeTempDirs, spawnCli, tempDir, waitFor } from '../helpers/runtime.js';
import { startFlow } from './helpers/flow.js';
import { saveCost } from './helpers/results.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from './helpers/sentinel.js';
import {
  expectNoneLost,
  firstClaimedAfter,
  hexOf,
  lastFinishOf,
  leasedIds,
  TALLY,
  tokenMarks,
} from './helpers/tally.js';

const PREFIX = 'sn';
const GROUPS = 4;
/** From Sentinel naming the new master to adds acknowledged again (producer and CLI). */
const RESUME_MS = 5000;

let setup: SentinelSetup;
let recorder: RedisServerHandle;
let record: Redis;

beforeAll(async () => {
  [setup, recorder] = await Promise.all([startSentinels(), startStandalone()]);
  record = new Redis(recorder.url);
  process.env.SKYQ_TALLY_REDIS = recorder.url;
});

afterAll(async () => {
  record?.disconnect();
  await Promise.all([setup?.stop(), recorder?.stop()]);
  removeTempDirs();
});

/** Polls until `found()` holds; the time it first held, or Infinity after `withinMs`. */
async function firstTime(found: () => boolean, withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (found()) return Date.now();
    await sleep(10);
  }
  return Number.POSITIVE_INFINITY;
}

describe('Sentinel failover', () => {
  it('malformed sentinel options are named in one line, before connecting', async () => {
    expect(() => new Queue({ sentinel: { nodes: [], master: MASTER_NAME } })).toThrow(
      /sentinel\.nodes.*non-empty list/,
    );
    expect(() => new Queue({ sentinel: { nodes: setup.sentinels, master: '' } })).toThrow(
      /sentinel\.master/,
    );
    expect(
      () => new Queue({ sentinel: { nodes: setup.sentinels, master: 'm' }, redis: 'redis://x' }),
    ).toThrow(/give sentinel or redis, not both/);
    const alone = await finish(spawnCli(['stats', '--sentinel-master', MASTER_NAME]));
    expect(alone.code).toBe(1);
    expect(alone.stderr.trim()).toMatch(/^skyq: .*sentinel-master.*needs --sentinel/);
    const noName = await finish(spawnCli(['stats', '--sentinel', '127.0.0.1:1']));
    expect(noName.stderr.trim()).toMatch(/^skyq: .*sentinel-master.*is needed with --sentinel/);
  });

  it('the CLI reaches the master through the sentinels, and shows no password', async () => {
    const nodes = setup.sentinels.map((s) => `${s.host}:${s.port}`).join(',');
    const env = {
      SKYQ_REDIS_PASSWORD: setup.password,
      SKYQ_SENTINEL_PASSWORD: setup.sentinelPassword,
    };
    const args = ['stats', '--sentinel', nodes, '--sentinel-master', MASTER_NAME];
    const ok = await finish(spawnCli([...args, '--prefix', PREFIX, '--json'], env));
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const wrong = await finish(
      spawnCli([...args, '--prefix', PREFIX], {
        ...env,
        SKYQ_SENTINEL_PASSWORD: 'not-the-sentinel-password',
      }),
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toContain(`sentinel master ${MASTER_NAME}`);
    for (const text of [ok.stdout, ok.stderr, wrong.stdout, wrong.stderr]) {
      expect(text).not.toContain(setup.password);
      expect(text).not.toContain(setup.sentinelPassword);
      expect(text).not.toContain('not-the-sentinel-password');
    }
  });

  it('producers and actors follow the new master: 0 acknowledged adds lost', async () => {
    const sentinel = {
      nodes: setup.sentinels,
      master: MASTER_NAME,
      password: setup.password,
      sentinelPassword: setup.sentinelPassword,
    };
    const where = { sentinel, prefix: PREFIX, groups: GROUPS };
    const queue = new Queue(where);
    const nodes = setup.sentinels.map((s) => `${s.host}:${s.port}`).join(',');
    const cli = spawnCli(
      [
        ...['produce', '--sentinel', nodes, '--sentinel-master', MASTER_NAME],
        ...['--prefix', PREFIX, '--groups', String(GROUPS), '--delay', '0'],
      ],
      { SKYQ_REDIS_PASSWORD: setup.password, SKYQ_SENTINEL_PASSWORD: setup.sentinelPassword },
    );
    const cliIds = () => [...cli.stdout().matchAll(/^added (\S+)$/gm)].map((m) => m[1] as string);
    let lines = 0;
    const feeder = setInterval(() => cli.child.stdin?.write(`line ${++lines}\n`), 40);
    let launcher: Launcher | undefined;
    try {
      await queue.ready();
      launcher = await startActors({
        ...where,
        handler: TALLY,
        logDir: tempDir(),
        publishStats: false,
        concurrency: 50,
      });
      const flow = startFlow(queue, { batch: 8, everyMs: 30, body: { ms: 5 } });
      await sleep(1500);
      expect(cliIds().length).toBeGreaterThan(0);

      const [leased, marks] = await Promise.all([
        leasedIds(queue.client, PREFIX, GROUPS),
        tokenMarks(queue.client, PREFIX, GROUPS),
      ]);
      const faultAt = Date.now();
      await setup.ask('SENTINEL', 'FAILOVER', MASTER_NAME);
      const switchedAt = await waitFor(
        'Sentinel to name the replica as master',
        async () => ((await setup.masterPort()) === setup.replica.port ? Date.now() : undefined),
        30_000,
        20,
      );
      const flowMark = flow.acked.length;
      const cliMark = cliIds().length;
      const [queueBack, cliBack] = await Promise.all([
        firstTime(() => flow.acked.length > flowMark, 15_000),
        firstTime(() => cliIds().length > cliMark, 15_000),
      ]);
      await sleep(2000);
      await flow.stop();
      clearInterval(feeder);
      cli.child.stdin?.end('quit\n');
      const ended = await cli.done;

      const acked = [...flow.acked, ...cliIds()].map(hexOf);
      const { finishes, result } = await expectNoneLost(record, acked, leased);
      const resumedAt = firstClaimedAfter(finishes, marks, undefined, switchedAt);
      const figures = {
        switchMs: switchedAt - faultAt,
        queueBackMs: queueBack - switchedAt,
        cliBackMs: cliBack - switchedAt,
        consumedMs: Math.round(resumedAt - switchedAt),
        refused: flow.refused(),
        cliRefused: (ended.stderr.match(/^refused line/gm) ?? []).length,
      };
      console.log(`sentinel: ${JSON.stringify(figures)}`);
      expect(queueBack - switchedAt).toBeLessThan(RESUME_MS);
      expect(cliBack - switchedAt).toBeLessThan(RESUME_MS);
      expect(resumedAt - switchedAt).toBeLessThan(RESUME_MS);
      expect(ended.stderr).not.toContain(setup.password);
      const allBack = lastFinishOf(finishes, leased);
      saveCost({
        key: '04b-sentinel-failover',
        fault:
          'SENTINEL FAILOVER of a master with one replica and three sentinels (clients connect through the sentinels)',
        messages: acked.length,
        inFlight: leased.size,
        recoveryMs: Math.round(resumedAt - faultAt),
        allBackMs: leased.size > 0 ? Math.max(0, Math.round(allBack - faultAt)) : null,
        duplicates: result.duplicates,
        lost: result.lost.length,
        notes:
          `Sentinel named the new master ${figures.switchMs} ms after SENTINEL FAILOVER; adds ` +
          `acknowledged again ${figures.queueBackMs} ms later (long-lived Queue) and ` +
          `${figures.cliBackMs} ms later (skyq produce), the actors claimed again after ` +
          `${figures.consumedMs} ms; ${figures.refused + figures.cliRefused} adds refused ` +
          `meanwhile (not acknowledged); ${result.unexpected} messages whose add was not ` +
          'acknowledged were handled too',
      });
    } finally {
      clearInterval(feeder);
      cli.child.kill('SIGKILL');
      await launcher?.stop();
      await queue.close();
    }
  });
});
