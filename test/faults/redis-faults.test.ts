/**
 * Redis faults while messages flow in and out, with a launcher in this process that must get
 * over them by itself:
 * - kill -9 of redis-server (appendonly yes, appendfsync always), then a restart on the same
 *   port and data dir: every add that was acknowledged is in the AOF and gets handled;
 * - SIGSTOP of redis-server for 5 s, then SIGCONT;
 * - a reply lost after Redis applied an add or a claim (helpers/cut-proxy.ts), which ioredis
 *   then sends again: the add is stored once, the claim's batch is not leased to nobody.
 * In flight: the leased messages (active sets) read right before the fault.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import {
  expectServedBy,
  heldPort,
  type RedisServerHandle,
  startStandalone,
} from '../helpers/redis.js';
import { removeTempDirs, tempDir } from '../helpers/runtime.js';
import { startCutProxy } from './helpers/cut-proxy.js';
import { ackedAfter, startFlow } from './helpers/flow.js';
import { freeze } from './helpers/processes.js';
import { type FaultCost, saveCost } from './helpers/results.js';
import {
  expectNoneLost,
  firstClaimedAfter,
  hexOf,
  lastFinishOf,
  leasedIds,
  TALLY,
  tokenMarks,
} from './helpers/tally.js';

const GROUPS = 4;
const DOWN_MS = 500;
const FROZEN_MS = 5000;
/** from Redis answering again to the producer's next acknowledged add (ioredis reconnects) */
const PRODUCER_BACK_MS = 5000;

let server: RedisServerHandle;
let recorder: RedisServerHandle;
let record: Redis;
const durable = async (port: number, dir: string) =>
  startStandalone({ port, dir, appendonly: true, extraArgs: ['--appendfsync', 'always'] });

beforeAll(async () => {
  [server, recorder] = await Promise.all([
    durable(await heldPort(), tempDir('skyq-aof-')),
    startStandalone(),
  ]);
  record = new Redis(recorder.url);
  process.env.SKYQ_TALLY_REDIS = recorder.url;
});

afterAll(async () => {
  record?.disconnect();
  await Promise.all([server?.stop(), recorder?.stop()]);
  removeTempDirs();
});

/** What a fault did to the messages flowing through it. */
async function throughFault(
  prefix: string,
  fault: () => Promise<{ backAt: number }>,
): Promise<Omit<FaultCost, 'key' | 'fault'>> {
  const where = { redis: server.url, prefix, groups: GROUPS };
  const queue = new Queue(where);
  let launcher: Launcher | undefined;
  try {
    await Promise.all([queue.ready(), record.del('done', 'faults')]); // ids repeat across prefixes
    launcher = await startActors({
      ...where,
      handler: TALLY,
      logDir: tempDir(),
      publishStats: false,
      concurrency: 50,
    });
    const flow = startFlow(queue, { batch: 10, everyMs: 20, body: { ms: 5 } });
    await sleep(1500);

    const faultAt = Date.now();
    const [leased, marks] = await Promise.all([
      leasedIds(queue.client, prefix, GROUPS),
      tokenMarks(queue.client, prefix, GROUPS),
    ]);
    const { backAt } = await fault();
    // Producers must recover too: an add acknowledged within PRODUCER_BACK_MS of Redis's return.
    const producedAt = await ackedAfter(flow, backAt, PRODUCER_BACK_MS);
    await sleep(2000);
    await flow.stop();

    const acked = flow.acked.map(hexOf);
    const { finishes, result } = await expectNoneLost(record, acked, leased);
    // Nothing can be claimed while Redis is dead or frozen: the first new claim comes after.
    const resumedAt = firstClaimedAfter(finishes, marks, undefined, backAt);
    expect(resumedAt).toBeLessThan(Number.POSITIVE_INFINITY);
    const allBack = lastFinishOf(finishes, leased);
    return {
      messages: acked.length,
      inFlight: leased.size,
      recoveryMs: Math.round(resumedAt - faultAt),
      allBackMs: leased.size > 0 ? Math.max(0, Math.round(allBack - faultAt)) : null,
      duplicates: result.duplicates,
      lost: result.lost.length,
      notes:
        `resumed ${Math.round(resumedAt - backAt)} ms after Redis answered again; ` +
        `the producer's adds acknowledged again ${Math.round(producedAt - backAt)} ms after; ` +
        `${flow.refused()} adds refused during the fault (not acknowledged); ` +
        `${result.unexpected} messages whose add was not acknowledged were handled too`,
    };
  } finally {
    await launcher?.stop();
    await queue.close();
  }
}

describe('Redis faults while messages flow', () => {
  it('kill -9 and restart with appendfsync always: no acknowledged add lost', async () => {
    const cost = await throughFault('rk', async () => {
      process.kill(server.pid, 'SIGKILL');
      await server.stop(); // reaps it; the data dir is the test's and stays
      await sleep(DOWN_MS);
      server = await durable(server.port, server.dir);
      await expectServedBy(server.url, server.pid);
      return { backAt: Date.now() };
    });
    saveCost({
      key: '02-redis-kill',
      fault: `kill -9 of redis-server (appendfsync always), restarted ${DOWN_MS} ms later on its data`,
      ...cost,
    });
  });

  it('SIGSTOP for 5 s, then SIGCONT: the actors carry on', async () => {
    const cost = await throughFault('rf', async () => {
      const { resumedAt } = await freeze(server.pid, FROZEN_MS);
      return { backAt: resumedAt };
    });
    saveCost({
      key: '03-redis-freeze',
      fault: 'SIGSTOP of redis-server for 5 s, then SIGCONT',
      ...cost,
    });
  });

  it('a reply lost after Redis applied an add: each acknowledged add is stored once', async () => {
    // ioredis sends a command again when the connection it went out on dies unanswered (a
    // kill -9 of Redis mid-call, a network cut). An add that Redis had applied must not be
    // applied a second time then: the same message under a second id is a duplicate nobody
    // can tell from a new message.
    const proxy = await startCutProxy(server.port);
    const queue = new Queue({ redis: proxy.url, prefix: 'rd', groups: 1 });
    try {
      await queue.ready();
      const bodies = Array.from({ length: 10 }, (_, i) => `order ${i}`);
      proxy.cutReplyTo('eval'); // add.lua: EVAL the first time, EVALSHA after
      const ids = await queue.addBulk(
        bodies.map((body) => ({ body, options: { delay: 3_600_000 } })),
      );
      expect(proxy.cuts()).toBe(1);
      const stored = await queue.client.zrange('rd:0', 0, -1);
      const storedBodies = await Promise.all(stored.map(async (id) => (await queue.get(id))?.body));
      expect({ ids: ids.length, stored: stored.length, bodies: storedBodies.sort() }).toEqual({
        ids: 10,
        stored: 10,
        bodies: [...bodies].sort(),
      });
      expect([...ids].sort()).toEqual([...stored].sort());
    } finally {
      await queue.close();
      await proxy.close();
    }
  });

  it('a reply lost after Redis applied a claim: its batch is not left leased to nobody', async () => {
    // The resent claim finds the batch leased already and leases nothing; the first call's
    // leases then hold those messages for a whole lease (30 s by default) and cost an attempt.
    const proxy = await startCutProxy(server.port);
    const queue = new Queue({ redis: proxy.url, prefix: 'rc', groups: 1 });
    try {
      await queue.ready();
      await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ body: `job ${i}` })));
      proxy.cutReplyTo('eval');
      const claimed = await queue.claim(0, 10, 30_000);
      expect(proxy.cuts()).toBe(1);
      const [counts] = await queue.counts();
      expect({ claimed: claimed.length, leased: counts?.active }).toEqual({
        claimed: 5,
        leased: 5,
      });
    } finally {
      await queue.close();
      await proxy.close();
    }
  });
});
