/**
 * Fuzz of raw members: what any Redis client could ZADD into a group's delayed set, with running
 * actors. Members: random bytes, lengths 0..100 KB, spaces, control bytes, invalid UTF-8, text
 * that looks like skyq ids or keys. Scores: past, now, soon, negative, -inf, far future, huge,
 * +inf, and texts Redis may refuse (nan, "1e3", " 5", "0x10"): the score Redis stored decides.
 * Every member due during the test is handled exactly once with its exact bytes as the body (or
 * dead-lettered with a reason); every other one stays delayed, untouched; no group stalls.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { groupKeys } from '../../src/base/keys.js';
import { Queue } from '../../src/index.js';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import { tempDir, untilAsleep, waitFor } from '../helpers/runtime.js';
import { ASCII, fuzzSeed, Rng, UNICODE } from './helpers/fuzz.js';
import { IDLE_CALLS_PER_SECOND, scriptCallsPerSecond } from './helpers/idle.js';
import { saveFuzz } from './helpers/results.js';
import { useFaultServers } from './helpers/servers.js';
import { account, finishesWithin, hexOf, readFinishes, TALLY } from './helpers/tally.js';

const servers = useFaultServers();
const PREFIX = 'fz';
const GROUPS = 4;
const CASES = 150;
const DUE_WITHIN_MS = 1500;

const INVALID_UTF8 = ['80', 'c080', 'eda080', 'e282', 'ff', 'fe', 'f8888080', 'c3'];

function member(rng: Rng): Buffer {
  switch (rng.int(0, 9)) {
    case 0:
      return Buffer.from(rng.text(rng.int(1, 64), ASCII));
    case 1:
      return Buffer.from(rng.text(rng.int(1, 40), ' \t\r\nab'));
    case 2:
      return rng.bytes(rng.int(1, 40), 0x00, 0x1f);
    case 3:
      return rng.bytes(rng.int(1, 300), 0x80, 0xff);
    case 4:
      return Buffer.from(rng.text(rng.int(1, 80), UNICODE));
    case 5: {
      const parts = Array.from({ length: rng.int(1, 4) }, () => rng.pick(INVALID_UTF8));
      return Buffer.concat([
        Buffer.from(rng.text(rng.int(0, 8), ASCII)),
        ...parts.map((h) => Buffer.from(h, 'hex')),
      ]);
    }
    case 6:
      return Buffer.from(
        rng.pick([
          `${rng.int(0, 12)}:a${rng.int(0, 9)}`,
          `${rng.int(0, 3)}:k1kz`,
          `{${PREFIX}:0}:msg`,
          `${PREFIX}:1`,
          'task:42:hello',
          '0:b10',
        ]),
      );
    case 7:
      return rng.bytes(rng.int(300, 5000));
    case 8:
      return rng.chance(0.5)
        ? rng.bytes(rng.int(10_000, 100_000))
        : Buffer.from(rng.text(rng.int(256, 2000), ASCII));
    default:
      return rng.bytes(rng.int(1, 64));
  }
}

function score(rng: Rng, now: number): string {
  return rng.pick([
    () => String(now - rng.int(1, 1e9)),
    () => String(now),
    () => String(now + rng.int(0, DUE_WITHIN_MS - 500)),
    () => String(-rng.int(1, 1e12)),
    () => '-inf',
    () => '0',
    () => String(now - 0.5),
    () => String(now + 365 * 86_400_000),
    () => '1e300',
    () => '+inf',
    () => rng.pick(['nan', 'NaN', '1e3', ' 5', '0x10', '', 'abc', '1_000']),
  ])();
}

/** A score as Redis prints it ("inf", "-inf", "1.5") as a number. */
const scoreOf = (text: string | null) =>
  text === null
    ? Number.NaN
    : /^[+-]?inf$/.test(text)
      ? Number(text.replace('inf', 'Infinity'))
      : Number(text);

describe('raw members other programs ZADD', () => {
  it('each is handled once with its exact bytes, or stays delayed until due', async () => {
    const rng = new Rng(fuzzSeed('raw members'));
    const queue = new Queue({ redis: servers.queue.url, prefix: PREFIX, groups: GROUPS });
    let launcher: Launcher | undefined;
    try {
      await queue.ready();
      launcher = await startActors({
        redis: servers.queue.url,
        prefix: PREFIX,
        groups: GROUPS,
        handler: TALLY,
        logDir: tempDir(),
        publishStats: false,
      });
      const client = queue.client;
      const cases = new Map<string, { group: number; score: number | null; text: string }>();
      for (let i = 0; cases.size < CASES; i++) {
        const bytes = member(rng);
        const hex = bytes.toString('hex');
        if (cases.has(hex)) continue; // a second ZADD would only move the first
        const group = rng.int(0, GROUPS - 1);
        const text = score(rng, await queue.clock(0).now());
        const key = groupKeys(PREFIX, group)[0] as string;
        // ZADD INCR of a new member stores the score and answers it as Redis read it (atomically:
        // an actor may take the member a moment later).
        const stored = await client.zadd(key, 'INCR', text, bytes).then(
          (reply) => scoreOf(String(reply)),
          () => null, // Redis refused the score: nothing stored
        );
        cases.set(hex, { group, score: stored, text });
        if (i % 25 === 24) await sleep(100); // some land on busy actors, some on idle ones
      }
      const deadline = (await queue.clock(0).now()) + DUE_WITHIN_MS;
      const due = [...cases].filter(([, c]) => c.score !== null && c.score <= deadline);
      const later = [...cases].filter(([, c]) => c.score !== null && c.score > deadline);
      const refused = [...cases].filter(([, c]) => c.score === null);
      expect(due.length).toBeGreaterThan(CASES / 2);

      const finishes = await finishesWithin(
        servers.record,
        due.map(([h]) => h),
        15_000,
      );
      const result = account(
        due.map(([h]) => h),
        finishes,
      );
      const show = (h: string) => ({
        member: `${h.slice(0, 24)} (${h.length / 2} bytes)`,
        ...cases.get(h),
      });
      expect(result.lost.map(show)).toEqual([]);
      expect(result).toMatchObject({ duplicates: 0, unexpected: 0 });
      for (const finish of finishes) {
        const wanted = cases.get(finish.h);
        expect({ h: finish.h, group: finish.g, body: finish.b }).toEqual({
          h: finish.h,
          group: wanted?.group,
          body: finish.h,
        });
      }
      for (const [hex, c] of later) {
        const key = groupKeys(PREFIX, c.group)[0] as string;
        expect(scoreOf(await client.zscore(key, Buffer.from(hex, 'hex')))).toBe(c.score);
      }
      for (const [hex, c] of refused) {
        const key = groupKeys(PREFIX, c.group)[0] as string;
        expect(await client.zscore(key, Buffer.from(hex, 'hex'))).toBeNull();
      }
      // Nothing is left half done (the last acks go within 200 ms of their finish), and no
      // group stalled: a new message in each runs at once.
      const settled = await waitFor('every ack', async () => {
        const counts = (await queue.counts()).map((c) => [c.ready, c.active, c.dead]);
        return counts.every(([r, a]) => r === 0 && a === 0) ? counts : undefined;
      }).catch(async () => (await queue.counts()).map((c) => [c.ready, c.active, c.dead]));
      expect(settled).toEqual(Array(GROUPS).fill([0, 0, 0]));
      await Promise.all(
        Array.from({ length: GROUPS }, (_, group) => queue.add({ probe: true }, { group })),
      );
      // Probes have an object body, so their finishes carry no body bytes (`b`).
      const probed = await waitFor('a probe done in every group', async () => {
        const all = await readFinishes(servers.record);
        const groups = all.filter((f) => f.b === undefined).map((f) => f.g);
        return groups.length >= GROUPS ? { all, groups } : undefined;
      });
      expect(probed.groups.sort()).toEqual(Array.from({ length: GROUPS }, (_, g) => g));
      expect(probed.all.length).toBe(due.length + GROUPS);
      // Members due far ahead (+inf, 1e300, a year) cost an idle group nothing: script calls
      // are the watcher's one per 50 ms (for all groups), not a claim per group and tick.
      const perSecond = await scriptCallsPerSecond(client);
      console.log(`idle: ${perSecond} script calls/s with members due later in every group`);
      expect(perSecond).toBeLessThanOrEqual(IDLE_CALLS_PER_SECOND);
      const stats = await launcher.stats();
      expect(stats.actors.map((a) => [a.status, a.restarts])).toEqual(
        Array(GROUPS).fill(['ok', 0]),
      );
      saveFuzz({
        key: '09-fuzz-members',
        what: `raw members ZADDed by another client: ${due.length} due, ${later.length} due later, ${refused.length} scores Redis refused`,
        cases: CASES,
        seed: rng.seed,
        checked:
          'due: handled once, exact bytes as the body, own group; later: untouched; refused: absent; no actor restarted, every group still runs a new message',
      });
    } finally {
      await launcher?.stop();
      await queue.close();
    }
  });

  it('one ZADDed with a negative score to an idle group is handled at once', async () => {
    // Group 0 gets members due long ago (a negative score, -inf); group 1 only members that
    // are never due (+inf, 1e300), which must not keep its actor busy.
    const queue = new Queue({ redis: servers.queue.url, prefix: 'neg', groups: 2 });
    let launcher: Launcher | undefined;
    try {
      await Promise.all([queue.ready(), servers.record.del('done')]);
      launcher = await startActors({
        redis: servers.queue.url,
        prefix: 'neg',
        groups: 2,
        handler: TALLY,
        logDir: tempDir(),
        publishStats: false,
      });
      // Idle: both actors sleep in BLPOP on their wake lists (the watcher looks every 50 ms).
      await Promise.all([0, 1].map((g) => untilAsleep(queue.client, 'neg', g)));
      const members = ['minus-five', 'minus-inf', 'behind-them'];
      await queue.client.zadd('neg:1', '+inf', 'never', '1e300', 'hardly');
      await queue.client.zadd('neg:0', '-5', 'minus-five', '-inf', 'minus-inf');
      await queue.client.zadd('neg:0', String(Date.now() - 1000), 'behind-them');
      const finishes = await finishesWithin(servers.record, members.map(hexOf), 3000);
      expect(
        account(members.map(hexOf), finishes).lost.map((h) => Buffer.from(h, 'hex').toString()),
      ).toEqual([]);
      expect(await scriptCallsPerSecond(queue.client)).toBeLessThanOrEqual(IDLE_CALLS_PER_SECOND);
      expect(await queue.client.zcard('neg:1')).toBe(2);
    } finally {
      await launcher?.stop();
      await queue.close();
    }
  });
});
