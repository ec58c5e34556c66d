/**
 * Rate limits (src/queue/ratelimit/, src/runtime/rate-gate.ts): a token bucket in Redis shared
 * by every launcher of a prefix, taken on Redis's clock around each claim; per-name limits hold
 * back only their name. Held-back messages wait unleased and are not charged an attempt.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { parseRateLimit } from '../src/queue/ratelimit/spec.js';
import { startActors } from '../src/start.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const LIST = 'fixture:rate';

interface Start {
  at: number;
  attempts: number;
  name: string;
  id: string;
}

async function starts(): Promise<Start[]> {
  const lines = await redis.client.lrange(LIST, 0, -1);
  return lines.map((line) => {
    const [at, attempts, name, id] = line.split(' ') as [string, string, string, string];
    return { at: Number(at), attempts: Number(attempts), name, id };
  });
}

const launcherOptions = (prefix: string, extra: object) => ({
  redis: redis.server.url,
  prefix,
  groups: 4,
  logDir: tempDir(),
  handler: fixture('rate-record.mjs'),
  watchMs: 0,
  // Not niced: on a loaded test machine a niced actor starves past its lease, and its job
  // runs again (at-least-once), which is not what these tests measure.
  actorNice: 0,
  ...extra,
});

describe('rate limits', () => {
  it('parses 100/s, 50/100ms, 6000/min and NAME=10/s; bad text is a one-line error', () => {
    expect(parseRateLimit(['100/s'])).toEqual({ '*': { max: 100, perMs: 1000 } });
    expect(parseRateLimit(['50/100ms', 'email.send=10/s'])).toEqual({
      '*': { max: 50, perMs: 100 },
      'email.send': { max: 10, perMs: 1000 },
    });
    expect(parseRateLimit(['6000/min'])).toEqual({ '*': { max: 6000, perMs: 60_000 } });
    expect(parseRateLimit(['5/2s'])).toEqual({ '*': { max: 5, perMs: 2000 } });
    for (const bad of ['100', 'fast', '100/fortnight', '0/s', '1/0ms']) {
      expect(() => parseRateLimit([bad])).toThrow(/^rate-limit: .*\(got "/);
    }
    expect(() => parseRateLimit(['1/s', '2/s'])).toThrow(/whole-queue limit twice/);
  });

  it('two launchers share 200/s: 2,000 ± 10 % in 10 s with one restarted midway; lost 0, duplicates 0, attempts 1', async () => {
    await redis.client.del(LIST);
    const prefix = 'rate2';
    const total = 2400;
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 4 });
    await queue.ready();
    // A backlog, all due now: the limit is the only thing that holds them back.
    const ids = await queue.addBulk(Array.from({ length: total }, (_, i) => ({ body: { i } })));
    const options = launcherOptions(prefix, {
      rateLimit: { max: 200, perMs: 1000 },
      // Long enough that a starved actor thread on a busy machine (niced, load 9+) still
      // acks before its lease runs out: a redelivery there is at-least-once, not the limit's.
      leaseMs: 10_000,
    });
    const a = await startActors(options);
    let b = await startActors(options);
    try {
      const first = await waitFor('the first start', async () => (await starts())[0]);
      // Midway, one launcher stops (handing its leases back) and a new one takes its place.
      await waitFor('5 s in', async () => (Date.now() - first.at >= 5000 ? true : undefined));
      await b.stop();
      b = await startActors(options);
      await waitFor('10 s in', async () => (Date.now() - first.at >= 10_000 ? true : undefined));
      const inWindow = (await starts()).filter((s) => s.at < first.at + 10_000).length;
      // 200/s × 10 s, plus the bucket's saved-up 20: well inside ±10 % (an unlimited run
      // handles all 2,400 in well under a second).
      console.log(`rate: ${inWindow} started in the first 10 s`);
      expect(inWindow).toBeGreaterThanOrEqual(1800);
      expect(inWindow).toBeLessThanOrEqual(2200);
      const all = await waitFor(
        'all started',
        async () => {
          const seen = await starts();
          return seen.length >= total ? seen : undefined;
        },
        20_000,
      );
      const unique = new Set(all.map((s) => s.id));
      expect(unique.size).toBe(total); // lost 0
      expect(all.length).toBe(total); // duplicates 0
      expect([...unique].sort()).toEqual([...ids].sort());
      expect(all.filter((s) => s.attempts !== 1)).toEqual([]); // waiting charged no attempt
      const buckets = await queue.rateLimits.list();
      expect(buckets).toMatchObject([{ name: '*', max: 200, perMs: 1000, cap: 20 }]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await queue.close();
    }
  }, 60_000);

  it('a per-name limit holds back only that name, unleased and uncharged; the rest flow', async () => {
    await redis.client.del(LIST);
    const prefix = 'rate-names';
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 4 });
    await queue.ready();
    const emails = await queue.addBulk(
      Array.from({ length: 100 }, (_, i) => ({ body: { i }, options: { name: 'email.send' } })),
    );
    const others = await queue.addBulk(
      Array.from({ length: 400 }, (_, i) => ({
        body: { i },
        options: i % 2 ? { name: 'sms.send' } : {},
      })),
    );
    // Leases shorter than email.send's wait: one kept leased while held back would see its
    // lease run out (and be charged an attempt) long before its turn.
    const options = launcherOptions(prefix, {
      rateLimit: { 'email.send': { max: 20, perMs: 1000 } },
      leaseMs: 1500,
    });
    const launcher = await startActors(options);
    try {
      const early = await waitFor('the other names all started', async () => {
        const seen = await starts();
        return seen.filter((s) => s.name !== 'email.send').length >= others.length
          ? seen
          : undefined;
      });
      const t0 = Math.min(...early.map((s) => s.at));
      // The others did not wait for email.send's tokens (400 at 20/s would take 20 s).
      expect(
        Math.max(...early.filter((s) => s.name !== 'email.send').map((s) => s.at)) - t0,
      ).toBeLessThan(
        5000, // generous: only a loaded machine's speed is in it
      );
      // email.send waits unleased: whatever has not started is delayed or ready, never active.
      const pending = emails.filter((id) => !early.some((s) => s.id === id));
      expect(pending.length).toBeGreaterThan(20);
      const states = await Promise.all(pending.slice(-10).map((id) => queue.get(id)));
      for (const info of states) expect(['delayed', 'ready']).toContain(info?.state);
      const all = await waitFor(
        'every email.send started',
        async () => {
          const seen = await starts();
          return seen.filter((s) => s.name === 'email.send').length >= emails.length
            ? seen
            : undefined;
        },
        15_000,
      );
      const mails = all
        .filter((s) => s.name === 'email.send')
        .map((s) => s.at)
        .sort((x, y) => x - y);
      // 100 at 20/s with 2 saved up: at least 4.9 s from the first to the last.
      expect((mails.at(-1) as number) - (mails[0] as number)).toBeGreaterThanOrEqual(4500);
      // In any 1 s, at most 20 + the 2 saved up (+1 for the window's edge).
      for (let i = 0; i < mails.length; i++) {
        const within = mails.filter(
          (at) => at >= (mails[i] as number) && at < (mails[i] as number) + 1000,
        );
        expect(within.length).toBeLessThanOrEqual(23);
      }
      const counted = new Map<string, number>();
      for (const s of all) counted.set(s.id, (counted.get(s.id) ?? 0) + 1);
      expect(all.filter((s) => (counted.get(s.id) ?? 0) > 1)).toEqual([]); // duplicates 0
      expect(all.length).toBe(emails.length + others.length);
      expect(new Set(all.map((s) => s.id)).size).toBe(emails.length + others.length); // lost 0
      expect(all.filter((s) => s.attempts !== 1)).toEqual([]); // not charged
      const stats = await launcher.stats();
      expect(stats.totals.heldBack).toBeGreaterThan(0);
      expect((await queue.rateLimits.list()).map((b) => b.name)).toEqual(['email.send']);
    } finally {
      await launcher.stop();
      await queue.close();
    }
  }, 60_000);
});
