/**
 * An actor thread that dies (ended as hung, process.exit() in a handler, a restart on request)
 * held more than the job that killed it: the others running beside it, and those leased ahead
 * waiting for their due time. Before, each waited for its lease to run out (60 s here) and a job on its
 * last attempt became a dead letter "lease expired on the last of N attempts", with no word of
 * the thread's death. Now the launcher hands the dead thread's leases back at once: each comes
 * back counting an attempt (the guilty one cannot be told from the innocent), its last error
 * says the thread died and why, one on its last attempt is dead-lettered with that reason, and
 * one leased ahead still starts no earlier than its due time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import type { Launcher } from '../src/runtime/launcher.js';
import { startActors } from '../src/start.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { FIXTURE_ENV, fixture, removeTempDirs, tempDir, waitFor } from './helpers/runtime.js';

/** The server's password: no reason, error or log line may show it. */
const PASSWORD = 'td-Secret-9f1c';
const LEASE_MS = 60_000;
/** Well before the lease: what comes back by lease expiry only would miss it by ~50 s. */
const BACK_WITHIN_MS = 10_000;

let server: RedisServerHandle;
let client: Redis;

beforeAll(async () => {
  server = await startStandalone({ password: PASSWORD });
  client = new Redis(server.url);
  process.env[FIXTURE_ENV] = server.url;
});

afterAll(async () => {
  client?.disconnect();
  await server?.stop();
  removeTempDirs();
});

interface Start {
  id: string;
  attempts: number;
  dueAt: number;
  startedAt: number;
}

async function starts(): Promise<Start[]> {
  return (await client.lrange('starts', 0, -1)).map((line) => JSON.parse(line) as Start);
}

const startsOf = (all: Start[], id: string) => all.filter((s) => s.id === id);

interface Case {
  prefix: string;
  logDir: string;
  launcher: Launcher;
  queue: Queue;
  /** slow and innocent, on their last attempt */
  last: string[];
  /** slow and innocent, with attempts to spare */
  spare: string[];
  /** leased ahead of their due time when the thread died (or just due) */
  ahead: string[];
}

async function begin(prefix: string, hangTimeoutMs: number): Promise<Case> {
  await client.del('starts');
  const logDir = tempDir();
  const launcher = await startActors({
    redis: server.url,
    prefix,
    groups: 1,
    handler: fixture('starts.mjs'),
    logDir,
    publishStats: false,
    concurrency: 20,
    leaseMs: LEASE_MS,
    lookaheadMs: 1000,
    hangTimeoutMs,
  });
  const queue = new Queue({ redis: server.url, prefix, groups: 1 });
  const slow = (maxAttempts: number) => ({
    body: { ms: 2500 },
    options: { attempts: maxAttempts },
  });
  const last = await queue.addBulk([slow(1), slow(1), slow(1)]);
  const spare = await queue.addBulk([slow(3), slow(3), slow(3)]);
  await waitFor('the slow jobs running', async () => {
    const all = await starts();
    return [...last, ...spare].every((id) => startsOf(all, id).length > 0) ? true : undefined;
  });
  return { prefix, logDir, launcher, queue, last, spare, ahead: [] };
}

/** What the death left: every job back well within the lease, with the death's reason. */
async function expectHandedBack(c: Case, diedAt: number, reason: string, extra: string[]) {
  const { queue } = c;
  const died = `its actor thread died: ${reason}`;
  // Back in seconds: the spare ones running again, the last ones dead letters.
  const back = await waitFor(
    'the dead thread’s jobs back',
    async () => {
      const all = await starts();
      const again = [...c.spare, ...c.ahead, ...extra].every((id) =>
        startsOf(all, id).some((s) => s.attempts === 2),
      );
      if (!again) return undefined;
      for (const id of c.last) if ((await queue.get(id))?.state !== 'dead') return undefined;
      return Date.now();
    },
    BACK_WITHIN_MS + 5000,
  );
  expect(back - diedAt).toBeLessThan(BACK_WITHIN_MS);
  // The spare ones run their second attempt for 2.5 s: their last error is the death's.
  for (const id of c.spare) {
    const info = await queue.get(id);
    expect(info?.attempts).toBe(2);
    expect(info?.lastError).toBe(died);
  }
  for (const id of c.last) {
    const info = await queue.get(id);
    expect(info?.state).toBe('dead');
    expect(info?.deadReason).toBe(`its actor thread died on the last of 1 attempts: ${reason}`);
    expect(info?.deadReason).not.toMatch(/lease expired/);
  }
  // Every job ends done or dead: none lost, none run more than twice (once per thread).
  const all = [...c.last, ...c.spare, ...c.ahead, ...extra];
  await waitFor('every job ended', async () => {
    for (const id of all) {
      const state = (await queue.get(id))?.state;
      if (state !== 'done' && state !== 'dead') return undefined;
    }
    return true;
  });
  const lost: string[] = [];
  for (const id of all) {
    const state = (await queue.get(id))?.state;
    if (state !== (c.last.includes(id) ? 'dead' : 'done')) lost.push(id);
  }
  expect(lost).toEqual([]);
  const everyStart = await starts();
  for (const id of all) expect(startsOf(everyStart, id).length).toBeLessThanOrEqual(2);
  // Never early: what was leased ahead starts at its due time at the soonest, both times.
  for (const id of c.ahead) {
    for (const s of startsOf(everyStart, id)) expect(s.startedAt).toBeGreaterThanOrEqual(s.dueAt);
  }
  // No password anywhere the death is told.
  const log = readFileSync(join(c.logDir, 'launcher.log'), 'utf8');
  expect(log).not.toContain(PASSWORD);
  for (const id of all) expect(JSON.stringify(await queue.get(id))).not.toContain(PASSWORD);
}

describe('the leases of an actor thread that dies', () => {
  it('come back at once when the hang watch ends a thread stuck in a handler', async () => {
    const c = await begin('td-hang', 600);
    try {
      // One claim leases the hanging job and, 990 ms ahead, three more: the thread never
      // gets to start those.
      const [hung, ...ahead] = await c.queue.addBulk([
        { body: { hang: true }, options: { attempts: 3 } },
        ...[1, 2, 3].map(() => ({ body: {}, options: { delay: 990, attempts: 3 } })),
      ]);
      c.ahead = ahead;
      await waitFor('the thread stuck', async () =>
        (await client.get(`fixture:hung:${hung}`)) ? true : undefined,
      );
      const stuckAt = Date.now();
      await expectHandedBack(c, stuckAt, 'hung: no heartbeat for 600 ms', [hung as string]);
      expect(c.launcher.restarts(0)).toBe(1);
    } finally {
      await c.launcher.stop(0);
      await c.queue.close();
    }
  });

  it('come back at once when a handler ends its thread with process.exit()', async () => {
    const c = await begin('td-exit', 0);
    try {
      const [exits, ...ahead] = await c.queue.addBulk([
        { body: { exit: 3 }, options: { attempts: 3 } },
        ...[1, 2, 3].map(() => ({ body: {}, options: { delay: 900, attempts: 3 } })),
      ]);
      c.ahead = ahead;
      await waitFor('the thread ended', () => (c.launcher.restarts(0) >= 1 ? true : undefined));
      await expectHandedBack(c, Date.now(), 'thread exited with code 3', [exits as string]);
    } finally {
      await c.launcher.stop(0);
      await c.queue.close();
    }
  });

  it('come back at once when the thread is restarted on request', async () => {
    const c = await begin('td-kill', 0);
    try {
      // One claim leases a job due now and, 900 ms ahead, three more, waiting for their time.
      const [now, ...ahead] = await c.queue.addBulk([
        { body: { ms: 2500 }, options: { attempts: 3 } },
        ...[1, 2, 3].map(() => ({ body: {}, options: { delay: 900, attempts: 3 } })),
      ]);
      c.ahead = ahead;
      await waitFor('the job due now running', async () =>
        startsOf(await starts(), now as string).length > 0 ? true : undefined,
      );
      const killedAt = Date.now();
      for (const id of ahead) {
        const info = await c.queue.get(id);
        expect(info?.state).toBe('active');
        expect(info?.dueAt).toBeGreaterThan(Date.now()); // leased ahead, not due yet
      }
      await c.launcher.restart(0);
      await expectHandedBack(c, killedAt, 'restarted on request', [now as string]);
    } finally {
      await c.launcher.stop(0);
      await c.queue.close();
    }
  });
});
