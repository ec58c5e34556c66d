// A launcher stopped while one of its actors waits for a claim's reply: the claim's messages
// are not left leased to nobody. Before, the reply that came in during the drain made the actor
// switch its mode back to running (draining → running, refused by its state machine), its loop
// threw, the drain never handed anything back, and the leased messages came back only when
// their lease ran out, an attempt later (a rate-limit test saw them start with attempts 2).
// The same with a claim refused for a newer data format: the refusal switched the draining actor
// to halted, which its state machine refuses too, and the drain rejected.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMAT_VERSION } from '../src/base/format-version.js';
import { keyOf } from '../src/base/keys.js';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { startHoldProxy } from './helpers/hold-proxy.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { removeTempDirs, tempDir, untilAsleep } from './helpers/runtime.js';

let server: RedisServerHandle;
let plain: Redis;

beforeAll(async () => {
  server = await startStandalone();
  plain = new Redis(server.url);
});
afterAll(async () => {
  plain.disconnect();
  await server.stop();
  removeTempDirs();
});

describe('a drain while a claim is on its way', () => {
  it('leaves nothing leased: each message handed back or run, once', async () => {
    const proxy = await startHoldProxy(server.port);
    const prefix = 'drainclaim';
    const options = { prefix, groups: 1, logDir: tempDir(), leaseMs: 60_000, watchMs: 0 };
    const launcher = await startActors({ ...options, redis: proxy.url });
    const producer = new Queue({ redis: server.url, prefix, groups: 1 });
    try {
      await untilAsleep(plain, prefix, 0);
      const claimed = proxy.holdReplyTo('skyq', 'evalsha', keyOf(prefix, 0, 'claimed'));
      const ids = await producer.addBulk([{ body: 'one' }, { body: 'two' }]);
      await claimed; // the claim leased them in Redis; its reply waits in the proxy
      const stopping = launcher.stop(2000);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the drain has begun
      proxy.release();
      await stopping;
      // Not leased: handled (the default handler logs them) or handed back to wait.
      const leased = await plain.zrangebyscore(keyOf(prefix, 0, 'active'), '-inf', '(+inf');
      expect(leased).toEqual([]);
      for (const id of ids) {
        const info = await producer.get(id);
        expect(['done', 'ready', 'delayed'], `${id}: ${info?.state}`).toContain(info?.state);
        expect(info?.attempts ?? 0, id).toBeLessThanOrEqual(1);
      }
    } finally {
      proxy.release();
      await launcher.stop();
      await producer.close();
      await proxy.close();
    }
  });

  it('a claim refused for a newer format during the drain: the drain still ends cleanly', async () => {
    const proxy = await startHoldProxy(server.port);
    const prefix = 'drainformat';
    const logDir = tempDir();
    const options = { prefix, groups: 1, logDir, leaseMs: 60_000, watchMs: 0 };
    const launcher = await startActors({ ...options, redis: proxy.url });
    const producer = new Queue({ redis: server.url, prefix, groups: 1 });
    try {
      await untilAsleep(plain, prefix, 0);
      // Due in 1 s: the actor's timer wakes it to claim, after the format was raised.
      await producer.add('later', { delay: 1000 });
      await plain.set(keyOf(prefix, 0, 'format'), String(FORMAT_VERSION + 1));
      await proxy.holdReplyTo('skyq', 'evalsha', keyOf(prefix, 0, 'claimed'));
      const stopping = launcher.stop(2000);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the drain has begun
      proxy.release();
      await expect(stopping).resolves.toBeUndefined();
      const log = readFileSync(join(logDir, 'actor-0.log'), 'utf8');
      expect(log).not.toMatch(/no way from/);
      expect(log).toMatch(/"event":"stopped"/);
    } finally {
      proxy.release();
      await launcher.stop();
      await producer.close();
      await proxy.close();
    }
  });
});
