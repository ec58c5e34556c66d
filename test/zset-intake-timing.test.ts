/**
 * Issue 28 §3: when a sorted-set intake moves members. A member due now starts within 100 ms
 * (the watcher's 50 ms read, or at once where keyspace notifications announce the ZADD); one
 * due later is moved when it falls due, not before and not on a poll; an idle set costs no
 * call of its own: its head rides in the watcher's one call per server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Launcher } from '../src/index.js';
import { intakeScriptSource } from '../src/redis/intake-scripts.js';
import { scriptSource } from '../src/redis/scripts.js';
import { startActors } from '../src/start.js';
import { percentile, readStarts } from './helpers/intake.js';
import { monitor, sha } from './helpers/monitor.js';
import { freshPrefix, redisNow } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('sorted-set intake timing', () => {
  let launcher: Launcher | null = null;
  afterEach(async () => {
    await launcher?.stop(2000);
    launcher = null;
    await redis.client.del('starts');
  });

  const launch = (prefix: string, key: string, extra = {}) =>
    startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      zsetIntake: [{ key, scoreUnit: 'ms', group: 1 }],
      handler: fixture('starts.mjs'),
      logDir: tempDir(),
      publishStats: false,
      // Not niced: beside other busy processes a nice-10 actor's starts wait for the core, not
      // for the intake (see test/intake's idle-list test).
      actorNice: 0,
      ...extra,
    });

  /** ZADDs `count` members each due the moment it is added (its score: Redis's now). */
  async function dueNow(key: string, count: number) {
    const writer = redis.client.duplicate();
    try {
      for (let i = 0; i < count; i++) {
        await writer.zadd(key, await redisNow(writer), `now:${i}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      writer.disconnect();
    }
    const starts = await waitFor('every start', async () => {
      const all = await readStarts(redis.client);
      return all.length >= count ? all : undefined;
    });
    return starts.map((s) => s.startedAt - s.dueAt);
  }

  // The bounds are on p50 and p90: a 1 s poll (the designs' own) fails both (~500 and ~900
  // ms), while the p99 of 60-80 starts is their slowest one or two, which a loaded machine
  // (three suites on two cores) can push past any bound a poll would fail.
  const report = (what: string, waits: number[]) => {
    const [p50, p90, p99] = [50, 90, 99].map((q) => percentile(waits, q)) as [
      number,
      number,
      number,
    ];
    console.log(
      `${what}: p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    );
    return { p50, p90 };
  };

  it('a member due now starts within 100 ms, read by the watcher (no keyspace notifications)', async () => {
    const prefix = freshPrefix('zt');
    const key = `${prefix}:now`;
    launcher = await launch(prefix, key);
    await new Promise((resolve) => setTimeout(resolve, 500)); // idle: nothing but the watcher
    const { p50, p90 } = report('due now, watcher', await dueNow(key, 60));
    // At most one 50 ms tick, a step and an add: p50 26-32 ms and p99 54-68 ms here alone;
    // beside four other intake suites on two cores, p50 51 ms and p99 383 ms. The bounds are
    // for such a machine (as the list intake's); a 1 s poll, the designs' own, fails both.
    expect(p50).toBeLessThan(100);
    expect(p90).toBeLessThan(500);
  });

  it('with keyspace notifications a ZADD is moved at once, even with the watcher off', async () => {
    const prefix = freshPrefix('zt');
    const key = `${prefix}:told`;
    launcher = await launch(prefix, key, { watchMs: 0, keyspaceEvents: 'enable' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { p50, p90 } = report('due now, notified', await dueNow(key, 60));
    // p50 3-4 ms, p99 16-24 ms here alone (94 ms beside other suites; p50 139 ms once in a
    // full run on a loaded machine).
    expect(p50).toBeLessThan(200);
    expect(p90).toBeLessThan(500);
    await redis.client.config('SET', 'notify-keyspace-events', '');
  });

  it('members due later are moved as each falls due: none early, and a few ms late', async () => {
    const prefix = freshPrefix('zt');
    const key = `${prefix}:later`;
    launcher = await launch(prefix, key);
    const now = await redisNow(redis.client);
    const members = Array.from({ length: 80 }, (_, i) => [now + 400 + i * 17, `l${i}`]);
    await redis.client.zadd(key, ...members.flat());
    const starts = await waitFor('80 starts', async () => {
      const all = await readStarts(redis.client);
      return all.length >= 80 ? all : undefined;
    });
    for (const s of starts) expect(s.startedAt).toBeGreaterThanOrEqual(s.dueAt - 2);
    const { p50, p90 } = report(
      'due later',
      starts.map((s) => s.startedAt - s.dueAt),
    );
    // A timer waits for each head: p50 4-5 ms and p99 7-13 ms here alone, 84-123 ms on a
    // loaded machine (p50 75 ms once in a full run); the bounds are for such a machine.
    expect(p50).toBeLessThan(200);
    expect(p90).toBeLessThan(500);
  });

  it('an idle set costs no call of its own: its head rides in the watcher’s call', async () => {
    const prefix = freshPrefix('zt');
    const key = `${prefix}:idle`;
    // One member due in an hour: the lane knows its head, and waits on a timer for it.
    await redis.client.zadd(key, (await redisNow(redis.client)) + 3_600_000, 'much later');
    launcher = await launch(prefix, key);
    await waitFor('the set read', async () =>
      (await (launcher as Launcher).stats()).intake?.[0]?.length === 1 ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const zmove = sha(intakeScriptSource('zmove'));
    const watchMany = sha(scriptSource('watch-many'));
    const calls = { zmove: 0, watch: 0, watchWithSet: 0 };
    const watching = monitor(redis.server.url, (line) => {
      const sha = /"evalsha" "([0-9a-f]{40})"/i.exec(line)?.[1];
      if (sha === zmove) calls.zmove++;
      if (sha === watchMany) {
        calls.watch++;
        if (line.includes(`"${key}"`)) calls.watchWithSet++;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    watching.stop();
    console.log(`idle set over 2 s: ${JSON.stringify(calls)}`);
    expect(calls.zmove).toBe(0);
    expect(calls.watch).toBeGreaterThan(10); // about 40: one per 50 ms tick
    expect(calls.watchWithSet).toBe(calls.watch);
    // A member that falls due now is seen by the next tick.
    await redis.client.zadd(key, await redisNow(redis.client), 'now');
    const [start] = await waitFor('the start', async () => {
      const all = await readStarts(redis.client);
      return all.length > 0 ? all : undefined;
    });
    expect(start?.body).toBe('now');
  });
});
