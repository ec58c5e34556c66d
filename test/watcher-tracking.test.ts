/**
 * The launcher's watcher on a standalone server without keyspace notifications: client
 * tracking (src/runtime/tracking.ts) tells it of writes to the groups it armed, so an idle
 * launcher reads its groups once a second instead of every 50 ms, and a plain ZADD of another
 * program is still started within a round trip or a tick. Its connections are killed under it:
 * it reads every tick again until it has armed anew, and loses no raw member meanwhile.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Launcher } from '../src/index.js';
import { scriptSource } from '../src/redis/scripts.js';
import { startActors } from '../src/start.js';
import { percentile, readStarts } from './helpers/intake.js';
import { countEvalsha, sha } from './helpers/monitor.js';
import { freshPrefix, redisNow } from './helpers/queue.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { FIXTURE_ENV, fixture, removeTempDirs, tempDir, waitFor } from './helpers/runtime.js';

let server: RedisServerHandle;
let plain: Redis;
let launcher: Launcher | null = null;
const watchMany = sha(scriptSource('watch-many'));

beforeAll(async () => {
  server = await startStandalone();
  plain = new Redis(server.url);
  process.env[FIXTURE_ENV] = server.url;
});
afterEach(async () => {
  await launcher?.stop(1000);
  launcher = null;
});
afterAll(async () => {
  plain?.disconnect();
  await server?.stop();
  removeTempDirs();
});

function launch(prefix: string): Promise<Launcher> {
  return startActors({
    redis: server.url,
    prefix,
    groups: 4,
    handler: fixture('starts.mjs'),
    logDir: tempDir(),
    publishStats: false,
    keyspaceEvents: 'off',
    // Not niced: beside busy processes (CI runs three files at once) a nice-10 actor's starts
    // wait for the core, and these bounds are on lateness (test/intake's idle-list test).
    actorNice: 0,
  });
}

/** Adds raw overdue members (no skyq producer, no token) and says how late each started. */
async function rawLateness(prefix: string, members: { group: number; id: string }[], gapMs = 300) {
  const lateness: number[] = [];
  for (const { group, id } of members) {
    const due = await redisNow(plain);
    await plain.zadd(`${prefix}:${group}`, due, id);
    const start = await waitFor(`${id} started`, async () =>
      (await readStarts(plain)).find((s) => s.id === id),
    );
    lateness.push(start.startedAt - due);
    await sleep(gapMs);
  }
  return lateness;
}

const median = (values: number[]) => percentile(values, 50);

describe('the watcher with client tracking', () => {
  it('reads an idle launcher’s groups about once a second, and starts a raw ZADD at once', async () => {
    const prefix = freshPrefix('wt');
    launcher = await launch(prefix);
    // Quiet for a while: every group is armed and the ticks slow down.
    await sleep(2500);
    const calls = await countEvalsha(server.url, watchMany, 3000);
    console.log(`idle watcher: ${calls} calls in 3 s`);
    expect(calls).toBeLessThanOrEqual(6); // 3 at one a second; 60 at one per 50 ms tick
    const clients = (await plain.client('LIST')) as string;
    expect(clients).toMatch(/name=skyq-tracking-listen .*sub=1 /);
    expect(clients).toMatch(/name=skyq-tracking-read .*flags=t /);
    // Raw members, each to an armed group: announced, checked, claimed.
    const late = await rawLateness(prefix, [
      { group: 1, id: 'raw-1' },
      { group: 2, id: 'raw-2' },
      { group: 3, id: 'raw-3' },
    ]);
    console.log(`raw ZADD to armed groups: started ${late.join(', ')} ms after`);
    // One announcement and a claim: well within a 50 ms tick's reach, even when loaded.
    expect(median(late)).toBeLessThan(300);
  });

  it('after its tracking connections are killed it reads every tick, then arms again', async () => {
    const prefix = freshPrefix('wk');
    launcher = await launch(prefix);
    await sleep(2500);
    const list = (await plain.client('LIST')) as string;
    const ids = [...list.matchAll(/^id=(\d+) .*name=skyq-tracking-\w+ /gm)].map((m) => m[1]);
    expect(ids).toHaveLength(2);
    for (const id of ids) await plain.client('KILL', 'ID', id as string);
    // Both come back, and tracking points at the new listener.
    await waitFor('tracking again', async () => {
      const now = (await plain.client('LIST')) as string;
      const fresh = [...now.matchAll(/^id=(\d+) .*name=skyq-tracking-\w+ /gm)].map((m) => m[1]);
      return fresh.length === 2 && !fresh.some((id) => ids.includes(id)) ? true : undefined;
    });
    // Armed no more: the next tick (within 50 ms, not the once-a-second one) reads and arms
    // every group again, so raw members soon after are announced as before. Had the watcher
    // not heard of the loss, they would wait for the once-a-second read.
    await sleep(300);
    const late = await rawLateness(
      prefix,
      [0, 1, 2].map((group) => ({ group, id: `after-kill-${group}` })),
      100,
    );
    console.log(`raw ZADD after the kill: started ${late.join(', ')} ms after`);
    expect(median(late)).toBeLessThan(150);
    // Quiet again: armed again, and the ticks slow down again.
    await sleep(2500);
    expect(await countEvalsha(server.url, watchMany, 2000)).toBeLessThanOrEqual(4);
    const late2 = await rawLateness(prefix, [{ group: 3, id: 'armed-again' }]);
    expect(late2[0]).toBeLessThan(300);
  });
});
