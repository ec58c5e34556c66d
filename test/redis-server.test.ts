import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePorts, REDIS_INSTALL_HINT, startRedisServer } from '../src/redis/server.js';
import { type RedisClusterHandle, startCluster, startStandalone } from './helpers/redis.js';

/** Resolves true when something accepts TCP connections on the port. */
function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('standalone redis-server', () => {
  it('starts, answers and is really gone after stop()', async () => {
    const server = await startStandalone();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    const client = new Redis(server.url, { lazyConnect: true });
    try {
      expect(await client.ping()).toBe('PONG');
      await client.set('skyq:test', 'hello');
      expect(await client.get('skyq:test')).toBe('hello');
    } finally {
      client.disconnect();
    }
    expect(existsSync(server.dir)).toBe(true);

    await server.stop();
    expect(await portOpen(server.port)).toBe(false);
    expect(processAlive(server.pid)).toBe(false);
    expect(existsSync(server.dir)).toBe(false); // temp dir was ours, so it is removed
    await server.stop(); // idempotent
  });

  it('keeps a caller-provided dir and writes the AOF there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skyq-test-'));
    try {
      const server = await startStandalone({ dir, appendonly: true });
      const client = new Redis(server.url, { lazyConnect: true });
      await client.set('k', 'v');
      client.disconnect();
      await server.stop();
      expect(readdirSync(dir)).toContain('appendonlydir');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a bad argument with redis-server output in the message', async () => {
    const started = startRedisServer({ extraArgs: ['--no-such-directive', 'x'] });
    const err = await started.then(
      async (s) => {
        await s.stop();
        throw new Error('redis-server unexpectedly accepted --no-such-directive');
      },
      (e: Error & { code?: string }) => e,
    );
    expect(err.code).toBe('SKYQ_REDIS_START_FAILED');
    expect(err.message).toMatch(/failed to start: process exited with code 1/);
    expect(err.message).toMatch(/no-such-directive/);
    expect(err.message).toMatch(/Bad directive or wrong number of arguments/);
  });

  it('findFreePorts(withBus) leaves room for the cluster bus port', async () => {
    const ports = await findFreePorts(3, { withBus: true });
    expect(new Set(ports).size).toBe(3);
    for (const p of ports) expect(p + 10_000).toBeLessThanOrEqual(65_535);
    expect(REDIS_INSTALL_HINT).toMatch(/apt-get install -y redis-server/);
  });
});

describe('Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  const admin: Redis[] = [];

  beforeAll(async () => {
    cluster = await startCluster();
    for (const n of cluster.nodes) admin.push(new Redis({ ...n, lazyConnect: true }));
  });
  afterAll(async () => {
    for (const c of admin) c.disconnect();
    await cluster?.stop();
  });

  it('every node reports cluster_state:ok with all 16384 slots', async () => {
    expect(cluster.nodes).toHaveLength(3);
    for (const c of admin) {
      const info = (await c.call('CLUSTER', 'INFO')) as string;
      expect(info).toMatch(/cluster_state:ok/);
      expect(info).toMatch(/cluster_slots_assigned:16384\r?\n/);
      expect(info).toMatch(/cluster_size:3\r?\n/);
    }
  });

  it('3 masters, no replicas, own all slots between them', async () => {
    const nodes = ((await admin[0].call('CLUSTER', 'NODES')) as string).trim().split('\n');
    expect(nodes).toHaveLength(3);
    for (const line of nodes) expect(line.split(' ')[2]).toMatch(/master/);

    const slots = (await admin[0].call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const owned = new Map<number, number>();
    for (const [from, to, [, port]] of slots)
      owned.set(port, (owned.get(port) ?? 0) + to - from + 1);
    expect([...owned.keys()].sort()).toEqual(cluster.nodes.map((n) => n.port).sort());
    expect([...owned.values()].reduce((a, b) => a + b, 0)).toBe(16384);
  });

  it('an ioredis Cluster client writes keys that land on every master', async () => {
    const client = new Cluster(cluster.nodes, { lazyConnect: true });
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `skyq:key:${i}`);
      for (const k of keys) await client.set(k, `v-${k}`);
      for (const k of keys) expect(await client.get(k)).toBe(`v-${k}`);

      // Ask each master directly which keys it holds: a key only answers on its owner.
      const holders = new Set<number>();
      for (const [i, node] of cluster.nodes.entries()) {
        for (const k of keys) {
          const v = await admin[i].get(k).catch(() => null); // MOVED on non-owners
          if (v !== null) {
            expect(v).toBe(`v-${k}`);
            holders.add(node.port);
          }
        }
      }
      expect(holders.size).toBe(3);
    } finally {
      client.disconnect();
    }
  });
});
