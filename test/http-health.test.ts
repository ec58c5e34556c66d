// /healthz: 200 only while every actor answers ping within a second and Redis answers; a hung
// actor, a dead one that cannot come back, or Redis gone each give 503 with the reason.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { httpLauncher } from './helpers/http.js';
import { startStandalone } from './helpers/redis.js';
import { tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();

interface HealthBody {
  status: string;
  actors: Record<string, string>;
  redis: string;
  reasons: string[];
}

async function health(url: string): Promise<{ status: number; body: HealthBody }> {
  const response = await fetch(new URL('/healthz', url));
  return { status: response.status, body: (await response.json()) as HealthBody };
}

describe('/healthz', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function start(redisUrl = redis.server.url) {
    const started = await httpLauncher(redisUrl);
    const queue = new Queue({ redis: redisUrl, groups: 2, prefix: started.prefix });
    queue.client.on('error', () => undefined); // one test stops Redis on purpose
    cleanup.push(
      () => started.launcher.stop(0),
      () => queue.close(),
    );
    return { ...started, queue };
  }

  it('is 200 when every actor and Redis answer', async () => {
    const { url } = await start();
    const { status, body } = await health(url);
    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'ok',
      healthy: true,
      actors: { 0: 'pong', 1: 'pong' },
      redis: 'PONG',
      servers: [
        {
          server: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
          policy: 'noeviction',
          evicting: false,
          skewMs: expect.any(Number),
          dataLostTotal: 0,
        },
      ],
      reasons: [],
      warnings: [],
    });
  });

  it('is 503 while an actor is too busy to answer ping', async () => {
    const { url, queue } = await start();
    await queue.add({ spinMs: 4000 }, { group: 1 });
    const { status, body } = await waitFor('a hung actor', async () => {
      const answer = await health(url);
      return answer.status === 503 ? answer : undefined;
    });
    expect(status).toBe(503);
    expect(body.status).toBe('unhealthy');
    expect(body.actors).toEqual({ 0: 'pong', 1: 'timeout' });
    expect(body.reasons).toEqual(['actor 1 did not answer ping within 1000 ms']);
    // Once the handler lets go, the actor answers again.
    await waitFor('the actor to answer again', async () =>
      (await health(url)).status === 200 ? true : undefined,
    );
  });

  it('is 503 while an actor is down', async () => {
    const refuse = join(tempDir('skyq-http-refuse-'), 'refuse');
    process.env.SKYQ_HTTP_REFUSE = refuse;
    cleanup.push(async () => {
      delete process.env.SKYQ_HTTP_REFUSE;
    });
    const { url, queue, launcher } = await start();
    expect((await health(url)).status).toBe(200);
    writeFileSync(refuse, ''); // from now on the handler module will not load: no restart works
    await queue.add({ exit: true }, { group: 0 });
    // While its thread exits the actor may first miss a ping; then it is down for good.
    const { status, body } = await waitFor('a down actor', async () => {
      const answer = await health(url);
      return answer.body.actors[0] === 'down' ? answer : undefined;
    });
    expect(status).toBe(503);
    expect(body.actors[1]).toBe('pong');
    expect(body.reasons).toContain('actor 0 is down (restarting)');
    expect(launcher.restarts(0)).toBeGreaterThanOrEqual(1);
  });

  it('is 503 when Redis does not answer', async () => {
    const own = await startStandalone();
    let stopped = false;
    cleanup.push(() => (stopped ? Promise.resolve() : own.stop()));
    const { url } = await start(own.url);
    expect((await health(url)).status).toBe(200);
    await own.stop();
    stopped = true;
    const started = Date.now();
    const { status, body } = await health(url);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(status).toBe(503);
    expect(body.redis).not.toBe('PONG');
    expect(body.reasons.join('\n')).toMatch(/^redis: /m);
  });
});
