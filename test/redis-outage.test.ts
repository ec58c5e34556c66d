/**
 * watchConnection: exactly one "down (reason)" when Redis goes away and one "up" when it is
 * back, however many reconnect attempts lie between. A real redis-server is stopped and
 * started again on the same port, and another is frozen with SIGSTOP.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type RedisClient } from '../src/redis/connection.js';
import { type ConnectionChange, watchConnection } from '../src/redis/outage.js';
import {
  expectServedBy,
  heldPort,
  type RedisServerHandle,
  startStandalone,
} from './helpers/redis.js';
import { removeTempDirs, tempDir, waitFor } from './helpers/runtime.js';

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
  removeTempDirs();
});

const states = (changes: ConnectionChange[]) => changes.map((c) => c.state);

describe('watchConnection', () => {
  it('reports one down and one up per outage of a stopped and restarted server', async () => {
    const port = await heldPort();
    const dir = tempDir('skyq-outage-');
    let server: RedisServerHandle = await startStandalone({ port, dir });
    cleanup.push(() => server.stop());
    const client: RedisClient = connect({ redis: server.url }, { name: 'watched' });
    cleanup.push(() => client.disconnect());
    await client.ping();
    const changes: ConnectionChange[] = [];
    const reconnects: number[] = [];
    client.on('reconnecting', () => reconnects.push(Date.now()));
    const watch = watchConnection(client, (change) => changes.push(change));
    cleanup.push(() => watch.stop());

    for (let outage = 1; outage <= 2; outage++) {
      const before = reconnects.length;
      await server.stop();
      await sleep(3000);
      // Many attempts, one line.
      expect(reconnects.length - before).toBeGreaterThan(3);
      expect(changes.slice(2 * (outage - 1))).toEqual([
        { state: 'down', reason: 'connection refused' },
      ]);
      expect(watch.state).toBe('down');
      server = await startStandalone({ port, dir });
      await expectServedBy(server.url, server.pid);
      await waitFor('the up report', () => (changes.length === 2 * outage ? true : undefined));
      expect(changes[2 * outage - 1]).toMatchObject({ state: 'up' });
      expect((changes[2 * outage - 1] as { downMs: number }).downMs).toBeGreaterThanOrEqual(2900);
      expect(await client.ping()).toBe('PONG');
    }
    await sleep(1500);
    expect(states(changes)).toEqual(['down', 'up', 'down', 'up']);
  });

  it('with a heartbeat, reports a frozen server (SIGSTOP) once, and its return once', async () => {
    const server = await startStandalone();
    cleanup.push(() => server.stop());
    cleanup.push(() => void process.kill(server.pid, 'SIGCONT'));
    const client = connect({ redis: server.url });
    cleanup.push(() => client.disconnect());
    const observer = connect({ redis: server.url });
    cleanup.push(() => observer.disconnect());
    await Promise.all([client.ping(), observer.ping()]);
    /** PINGs the server answered: the heartbeats, once both connections pinged above */
    const pings = async () =>
      Number(/cmdstat_ping:calls=(\d+)/.exec(await observer.info('commandstats'))?.[1] ?? 0);
    const answered = async (count: number) => {
      const from = await pings();
      await waitFor(`${count} heartbeats answered`, async () =>
        (await pings()) >= from + count ? true : undefined,
      );
    };
    const changes: ConnectionChange[] = [];
    // How long a PING may take is machine speed, not the guarantee (a frozen server never
    // answers): 2 s, the default, since a PING on two loaded cores took over 500 ms here.
    const watch = watchConnection(client, (change) => changes.push(change), {
      heartbeatMs: 200,
      heartbeatTimeoutMs: 2000,
      probeMs: 300,
    });
    cleanup.push(() => watch.stop());

    await answered(4);
    expect(changes).toEqual([]); // a healthy server: heartbeats answered, nothing reported
    process.kill(server.pid, 'SIGSTOP');
    await waitFor('the down report', () => (changes.length > 0 ? true : undefined), 10_000);
    await sleep(1000); // three more probes, unanswered: still one report
    expect(changes).toEqual([{ state: 'down', reason: 'no answer to PING within 2000 ms' }]);
    process.kill(server.pid, 'SIGCONT');
    await waitFor('the up report', () => (changes.length === 2 ? true : undefined));
    await answered(4); // heartbeats again, answered: no more reports
    expect(states(changes)).toEqual(['down', 'up']);
  });

  it('says nothing once stopped', async () => {
    const server = await startStandalone();
    const client = connect({ redis: server.url });
    cleanup.push(() => client.disconnect());
    await client.ping();
    const changes: ConnectionChange[] = [];
    watchConnection(client, (change) => changes.push(change)).stop();
    await server.stop();
    await sleep(1500);
    expect(changes).toEqual([]);
  });
});
