/**
 * Issue 28 §3: kill -9 of a launcher in the middle of a sorted-set intake, then a new launcher.
 * Two seeds' delay queues, 40,000 members each (`JOB_MESSAGE_QUEUE` in seconds, `seta` in ms,
 * falling due over a few seconds), consumed with `skyq start --zset-intake`. Every member is
 * handled (0 lost), none before its score; a member may run twice only when it was in flight at
 * the kill: held in the dead launcher's holding lists (moved, maybe added, not yet dropped) or
 * leased by its actors.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { readStarts, zaddWithCli } from '../helpers/intake.js';
import { redisNow } from '../helpers/queue.js';
import { type CliChild, fixture, tempDir, waitFor } from '../helpers/runtime.js';
import { killHard, startSkyq, stopGracefully } from './helpers/processes.js';
import { saveCost } from './helpers/results.js';
import { useFaultServers } from './helpers/servers.js';
import { leasedIds } from './helpers/tally.js';

const servers = useFaultServers();
const PREFIX = 'zk';
const GROUPS = 4;
const PER_SET = 40_000;

describe('kill -9 of a launcher mid sorted-set intake', () => {
  it('a new launcher adopts its holding lists: 0 lost, none early, duplicates only among the in flight', async () => {
    const queue = new Queue({ redis: servers.queue.url, prefix: PREFIX, groups: GROUPS });
    const sets = ['JOB_MESSAGE_QUEUE', 'seta'];
    const args = ['--redis', servers.queue.url, '--prefix', PREFIX, '--groups', String(GROUPS)];
    args.push('--zset-intake', 'JOB_MESSAGE_QUEUE:s,seta:ms', '--lease', '2s');
    args.push('--handler', fixture('starts.mjs'));
    const env = { SKYQ_FIXTURE_REDIS: servers.recorder.url };
    const launchers: CliChild[] = [];
    try {
      await queue.ready();
      const now = await redisNow(queue.client);
      // Seconds: due from a second ago to 3 s ahead; ms: from 1 s ago to 4 s ahead.
      const jobs = Array.from({ length: PER_SET }, (_, i): [number, string] => [
        Math.floor(now / 1000) - 1 + (i % 5),
        JSON.stringify({ id: i, topic: 'order.timeout' }),
      ]);
      const seta = Array.from({ length: PER_SET }, (_, i): [number, string] => [
        now - 1000 + Math.floor((i * 5000) / PER_SET),
        `seta:${String(i).padStart(5, '0')}`,
      ]);
      // JSON members by a client (redis-cli would take their quotes for its own), seta's by redis-cli.
      for (let i = 0; i < PER_SET; i += 1000) {
        await queue.client.zadd(sets[0] as string, ...jobs.slice(i, i + 1000).flat());
      }
      await zaddWithCli(servers.queue, sets[1] as string, seta);
      const waiting = () =>
        Promise.all(sets.map((key) => queue.client.zcard(key))).then((n) => n[0] + n[1]);

      const first = await startSkyq([...args, '--log-dir', tempDir()], env);
      launchers.push(first);
      // Killed early: the members due at once all move in moments on a quiet machine.
      await waitFor(
        '1,000 members moved',
        async () => ((await waiting()) <= 2 * PER_SET - 1000 ? true : undefined),
        30_000,
        5,
      );
      const faultAt = Date.now();
      await killHard(first);
      // What was in flight: items in the dead launcher's holding lists, and its leases.
      const registry = await queue.client.hgetall(`{${PREFIX}:intake}:holding`);
      const holding = Object.keys(registry);
      const held = (await Promise.all(holding.map((key) => queue.client.llen(key)))).reduce(
        (a, b) => a + b,
        0,
      );
      const leased = await leasedIds(queue.client, PREFIX, GROUPS);
      const left = await waiting();
      expect(left).toBeGreaterThan(0); // the kill did land mid-intake
      expect(holding.length).toBe(2);

      launchers.push(await startSkyq([...args, '--log-dir', tempDir()], env));
      const due = new Map<string, number>([
        ...jobs.map(([score, member]): [string, number] => [member, score * 1000]),
        ...seta.map(([score, member]): [string, number] => [member, score]),
      ]);
      await waitFor(
        'every member handled',
        async () => {
          const bodies = new Set((await readStarts(servers.record)).map((s) => s.body as string));
          return bodies.size >= due.size && [...due.keys()].every((m) => bodies.has(m))
            ? true
            : undefined;
        },
        90_000,
        250,
      );
      const allBackMs = Date.now() - faultAt;
      await new Promise((resolve) => setTimeout(resolve, 2500)); // late duplicates would show
      const final = await readStarts(servers.record);
      const bodies = new Set(final.map((s) => s.body as string));
      const lost = [...due.keys()].filter((member) => !bodies.has(member)).length;
      const duplicates = final.length - bodies.size;
      const early = final.filter((s) => s.startedAt < (due.get(s.body as string) ?? 0) - 2);
      const wrongDue = final.filter((s) => s.dueAt !== due.get(s.body as string));
      const afterFault = final.filter((s) => s.startedAt > faultAt).map((s) => s.startedAt);
      const recoveryMs = Math.round(Math.min(...afterFault) - faultAt);
      const inFlight = held + leased.size;
      console.log(
        `zset intake kill: ${left} members still in the sets, ${held} held, ${leased.size} leased at the kill; ${duplicates} duplicates, ${lost} lost, ${early.length} early; all handled ${allBackMs} ms after`,
      );
      expect(lost).toBe(0);
      expect(early.length).toBe(0);
      expect(wrongDue.length).toBe(0);
      expect(duplicates).toBeLessThanOrEqual(inFlight);
      // The dead launcher's holding lists are adopted (after 6 s of silence) and emptied.
      await waitFor(
        "the dead launcher's holding lists adopted",
        async () => {
          const left = await Promise.all(holding.map((key) => queue.client.exists(key)));
          return left.every((n) => n === 0) ? true : undefined;
        },
        15_000,
        100,
      );
      saveCost({
        key: '01b-zset-intake-kill',
        fault:
          'kill -9 of a `skyq start --zset-intake JOB_MESSAGE_QUEUE:s,seta:ms` launcher mid-way through 80,000 members falling due',
        messages: due.size,
        inFlight,
        recoveryMs,
        allBackMs,
        duplicates,
        lost,
        notes: `in flight: ${held} in holding lists, ${leased.size} leased; ${early.length} started before their score; adoption waits 6 s of silence`,
      });
      const stopped = await stopGracefully(launchers[1] as CliChild);
      expect(stopped.code).toBe(0);
      expect(await queue.client.hlen(`{${PREFIX}:intake}:holding`)).toBe(0);
    } finally {
      for (const run of launchers) run.child.kill('SIGKILL');
      await queue.close();
    }
  });
});
