/**
 * No script call is long, whatever the bodies (issue 7, item 4): promotion reads no records, a
 * claim reads records only up to a byte budget, adds are cut by bytes. Before, one
 * `claim(max=1)` over 5,000 due messages of 100 KB read every body (7 s of Redis time, other
 * clients got BUSY). Here: 5,000 due messages (as many as one claim promotes), every tenth of
 * 1 MiB and the others of 2 KiB, and SLOWLOG set to 10 ms. Records over 64 KiB are spilled to
 * keys of their own (src/queue/spill.ts), so no script copies such a body; records over 1 KiB
 * are sized for the claim's byte budget. (All 5,000 of 1 MiB took 36 s of the fault suite's
 * wall time for 5 GB that prove nothing the 500 do not: the old claim read every body, 510 MiB
 * here, seconds of Redis time.)
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_NAMES } from '../../src/base/keys.js';
import type { Message } from '../../src/index.js';
import { Queue } from '../../src/index.js';
import { SCRIPT_NAMES, scriptSource } from '../../src/redis/scripts.js';
import { untilRedisTime } from '../helpers/queue.js';
import { type RedisServerHandle, startStandalone } from '../helpers/redis.js';
import { noteRetry } from '../helpers/retry-log.js';

const MESSAGES = 5_000;
const BIG = 'b'.repeat(1024 * 1024);
const SMALL = 's'.repeat(2 * 1024);
const bodyOf = (i: number) => (i % 10 === 0 ? BIG : SMALL);

let server: RedisServerHandle;
let plain: Redis;

beforeAll(async () => {
  server = await startStandalone({
    extraArgs: ['--slowlog-log-slower-than', '10000', '--slowlog-max-len', '10000'],
  });
  plain = new Redis(server.url);
  // SLOWLOG times wall clock. On 2 cores this test's own client (parsing 1 MiB replies, its GC
  // threads) can keep redis-server waiting for a core for a scheduler slice (~10 ms), so what
  // is timed would be that wait, not Redis's work: every thread of this process yields first
  // (after the server started: a child inherits its parent's niceness), and where allowed
  // (root, as in CI) the server gets ahead of everything else.
  for (const thread of readdirSync('/proc/self/task')) setPriority(Number(thread), 19);
  try {
    setPriority(server.pid, -10);
  } catch {
    // not permitted: the client's niceness alone
  }
});

afterAll(async () => {
  plain?.disconnect();
  await server?.stop();
});

/** Script names by the SHA1 ioredis runs them under (the loader's full text of each). */
function scriptNames(): Map<string, string> {
  return new Map(
    SCRIPT_NAMES.map((name) => [createHash('sha1').update(scriptSource(name)).digest('hex'), name]),
  );
}

/** SLOWLOG entries of scripts: [id, time, microseconds, args…]. */
async function slowScripts(): Promise<string[]> {
  const entries = (await plain.call('SLOWLOG', 'GET', '-1')) as [
    number,
    number,
    number,
    string[],
  ][];
  const names = scriptNames();
  return entries
    .filter(([, , , args]) => /^eval/i.test(String(args[0])))
    .map(([, , us, args]) => {
      const name = names.get(String(args[1])) ?? String(args[0]);
      // ARGV after the group's keys: enough to tell the promoting claim from the drain's
      const argv = args.slice(2 + 1 + KEY_NAMES.length, 2 + 1 + KEY_NAMES.length + 12);
      return `${name} ${argv.map((a) => String(a).slice(0, 16)).join(' ')}: ${us} µs`;
    });
}

let attempts = 0;
let lastMiss = '';

describe('5,000 due messages, 500 of them of 1 MiB', () => {
  it('no script call reaches 10 ms: adds, the promoting claim, and the drain', {
    timeout: 300_000,
    // Once more on a miss: a VM's rare stall (a page reclaimed under the server, a neighbour's
    // burst) can land on any one of ~12,000 calls; the code this guards against misses every time
    // (each 1 MiB add 10-21 ms, one claim 7 s).
    // Each retry is logged (test/helpers/retry-log.ts) with the miss that caused it.
    retry: 1,
  }, async () => {
    attempts++;
    if (attempts > 1) noteRetry('slowlog: no script call reaches 10 ms', attempts, lastMiss);
    lastMiss = '';
    const queue = new Queue({ redis: server.url, groups: 1, maxBodyBytes: 2 * 1024 * 1024 });
    try {
      await plain.flushall(); // a retry starts from an empty server too
      await queue.ready();
      await plain.call('SLOWLOG', 'RESET');
      let lastDue = 0;
      // Batches of 50: the producer would not hold 5 GB of records at once either.
      for (let i = 0; i < MESSAGES; i += 50) {
        const ids = await queue.addBulk(
          Array.from({ length: 50 }, (_, j) => ({ body: bodyOf(i + j), options: { delay: 500 } })),
        );
        lastDue = Math.max(lastDue, (await queue.get(ids[0] as string))?.dueAt ?? 0);
      }
      // Every one waits: the first are due already (counted ready) while the last are added.
      const waiting = (await queue.counts())[0];
      expect((waiting?.delayed ?? 0) + (waiting?.ready ?? 0)).toBe(MESSAGES);
      await untilRedisTime(plain, lastDue + 600);

      const [first] = await queue.claim(0, 1);
      expect(first?.body).toBe(BIG); // the first added
      let taken: Message[] = first ? [first] : [];
      let total = taken.length;
      while (total < MESSAGES) {
        const polled = await queue.poll(0, { max: 500, ack: taken });
        taken = polled.messages;
        total += taken.length;
        expect(taken.length).toBeGreaterThan(0); // the budget shrinks a batch, never to nothing
      }
      await queue.ack(taken);
      expect((await queue.counts())[0]).toMatchObject({ delayed: 0, ready: 0, active: 0 });
      const slow = await slowScripts();
      lastMiss = `slow calls: ${slow.join('; ')}`;
      expect(slow).toEqual([]);
    } catch (error) {
      if (!lastMiss) lastMiss = (error as Error).message;
      throw error;
    } finally {
      await queue.close();
    }
  });
});
