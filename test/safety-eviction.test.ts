// A Redis whose maxmemory-policy can evict (allkeys-*) deletes queued messages when full:
// launchers refuse to start on one (every master of a cluster is checked), --allow-eviction
// turns that into a loud warning, /healthz answers 503 and /metrics shows it while it lasts,
// a reconnect checks again, and the library warns once per server. A server that will not
// tell its policy (ACL) does not stop a start: it is said once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Launcher, Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { sampleValue, scrape } from './helpers/http.js';
import { freshPrefix, waitFor } from './helpers/queue.js';
import { type RedisClusterHandle, startCluster } from './helpers/redis.js';
import { runCli, spawnCli, tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const FIX = 'CONFIG SET maxmemory-policy noeviction';

/** Node's process warnings with a skyq code, collected while `during` runs. */
async function warningsDuring(during: () => Promise<void>, settleMs = 300): Promise<string[]> {
  const seen: string[] = [];
  const listener = (warning: Error & { code?: string }) => {
    if (warning.code?.startsWith('SKYQ_')) seen.push(warning.message);
  };
  process.on('warning', listener);
  try {
    await during();
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

/** A waitFor probe: true once /healthz answers `status`. */
const healthIs = (base: string, status: number) => async () =>
  (await fetch(new URL('/healthz', base))).status === status ? true : undefined;

const setPolicy = (client: Redis, policy: string) =>
  client.config('SET', 'maxmemory-policy', policy);

describe('a standalone server', () => {
  let launcher: Launcher | null = null;
  afterEach(async () => {
    await launcher?.stop(0);
    launcher = null;
    await setPolicy(redis.client, 'noeviction');
  });

  it('with allkeys-lru: startActors and skyq start refuse, naming the policy and the fix', async () => {
    await setPolicy(redis.client, 'allkeys-lru');
    const failure = await startActors({ redis: redis.server.url, groups: 2, logDir: tempDir() })
      .then(() => null)
      .catch((error: Error & { code?: string }) => error);
    expect(failure?.code).toBe('ERR_SKYQ_EVICTION');
    expect(failure?.message).toContain(`127.0.0.1:${redis.server.port}`);
    expect(failure?.message).toContain('maxmemory-policy allkeys-lru');
    expect(failure?.message).toContain(FIX);

    const cli = await runCli([
      'start',
      '--redis',
      redis.server.url,
      '--groups',
      '2',
      '--log-dir',
      tempDir(),
    ]);
    expect(cli.code).toBe(1);
    const lines = cli.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('maxmemory-policy allkeys-lru');
    expect(lines[0]).toContain(FIX);
    expect(lines[0]).toContain('--allow-eviction');
  });

  it('with --allow-eviction: runs, warns loudly, /healthz 503 and a metric while it lasts', async () => {
    await setPolicy(redis.client, 'allkeys-random');
    const logDir = tempDir();
    const warnings = await warningsDuring(async () => {
      launcher = await startActors({
        redis: redis.server.url,
        prefix: freshPrefix('evict'),
        groups: 2,
        logDir,
        allowEviction: true,
        http: { listen: '127.0.0.1:0' },
      });
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('maxmemory-policy allkeys-random');
    expect(warnings[0]).toContain(FIX);
    await waitFor('the log line', () =>
      readFileSync(join(logDir, 'launcher.log'), 'utf8').includes('allkeys-random')
        ? true
        : undefined,
    );
    const base = launcher?.http?.url as string;
    const health = await fetch(new URL('/healthz', base));
    expect(health.status).toBe(503);
    const body = (await health.json()) as { reasons: string[] };
    expect(body.reasons.join('\n')).toContain('maxmemory-policy allkeys-random');
    const server = `127.0.0.1:${redis.server.port}`;
    const { samples } = await scrape(base);
    expect(sampleValue(samples, 'skyq_redis_evicting', { server, policy: 'allkeys-random' })).toBe(
      1,
    );

    // The fix, then a reconnect (as after a restart of Redis): the launcher checks again.
    await setPolicy(redis.client, 'noeviction');
    await redis.client.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor('/healthz 200', healthIs(base, 200), 10_000);
    const after = await scrape(base);
    expect(
      sampleValue(after.samples, 'skyq_redis_evicting', { server, policy: 'noeviction' }),
    ).toBe(0);
  });

  it('skyq dashboard refuses in one line; with --allow-eviction it serves, warns, /healthz 503', async () => {
    await setPolicy(redis.client, 'allkeys-lru');
    const args = ['dashboard', '--redis', redis.server.url, '--http', '127.0.0.1:0'];
    const refused = await runCli(args);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('maxmemory-policy allkeys-lru');
    expect(refused.stderr).toContain(FIX);

    const run = spawnCli([...args, '--allow-eviction']);
    try {
      const url = await waitFor(
        'the dashboard',
        () =>
          /dashboard, \/metrics and \/healthz on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(
            run.stdout(),
          )?.[1],
      );
      expect(run.stderr()).toContain('maxmemory-policy allkeys-lru');
      const health = await fetch(new URL('/healthz', url));
      expect(health.status).toBe(503);
      const overview = (await (await fetch(new URL('/api/overview', url))).json()) as {
        servers: { evicting: boolean; policy: string }[];
      };
      expect(overview.servers).toMatchObject([{ evicting: true, policy: 'allkeys-lru' }]);
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });

  it('skyq start --allow-eviction runs and warns on stderr', async () => {
    await setPolicy(redis.client, 'allkeys-lru');
    const run = spawnCli([
      'start',
      '--redis',
      redis.server.url,
      '--groups',
      '1',
      '--log-dir',
      tempDir(),
      '--allow-eviction',
    ]);
    try {
      await waitFor('the actors', () => (run.stdout().includes(' ready on ') ? true : undefined));
      expect(run.stderr()).toContain('maxmemory-policy allkeys-lru');
      expect(run.stderr()).toContain('--allow-eviction lets skyq run anyway');
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });

  it('turned evicting after start: seen at the next reconnect, /healthz 503', async () => {
    const logDir = tempDir();
    launcher = await startActors({
      redis: redis.server.url,
      prefix: freshPrefix('evict'),
      groups: 2,
      logDir,
      http: { listen: '127.0.0.1:0' },
    });
    const base = launcher.http?.url as string;
    expect((await fetch(new URL('/healthz', base))).status).toBe(200);
    await setPolicy(redis.client, 'allkeys-lfu');
    await redis.client.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor('/healthz 503', healthIs(base, 503), 10_000);
    // The log line is written as the check ends; the file may take a moment.
    const log = await waitFor('the log line', () => {
      const text = readFileSync(join(logDir, 'launcher.log'), 'utf8');
      return text.includes('maxmemory-policy allkeys-lfu') ? text : undefined;
    });
    expect(log).toContain(FIX);
  });

  it('accepts noeviction and volatile-* in silence', async () => {
    for (const policy of ['noeviction', 'volatile-lru']) {
      await setPolicy(redis.client, policy);
      const warnings = await warningsDuring(async () => {
        const started = await startActors({
          redis: redis.server.url,
          groups: 1,
          logDir: tempDir(),
        });
        await started.stop(0);
      });
      expect(warnings, policy).toEqual([]);
    }
  });

  it('the library warns once per server, on the first command, however many Queues', async () => {
    await setPolicy(redis.client, 'allkeys-lru');
    const warnings = await warningsDuring(async () => {
      for (let i = 0; i < 3; i++) {
        const queue = new Queue({ redis: redis.server.url, prefix: freshPrefix('evict') });
        await queue.add('x');
        await queue.add('y');
        await new Promise((resolve) => setTimeout(resolve, 100));
        await queue.close();
      }
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`127.0.0.1:${redis.server.port}`);
    expect(warnings[0]).toContain('allkeys-lru');
  });
});

describe('a server that will not tell its policy (ACL without INFO or CONFIG)', () => {
  it('does not stop the start, and is said once', async () => {
    const user = 'skyq-noinfo';
    await redis.client.call(
      'ACL',
      'SETUSER',
      user,
      'on',
      '>secret-pass-1',
      '~*',
      '&*',
      '+@all',
      '-info',
      '-config',
    );
    try {
      const url = `redis://${user}:secret-pass-1@127.0.0.1:${redis.server.port}`;
      const logDir = tempDir();
      let started: Launcher | null = null;
      const warnings = await warningsDuring(async () => {
        started = await startActors({ redis: url, groups: 1, logDir, keyspaceEvents: 'off' });
      });
      await (started as Launcher | null)?.stop(0);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('cannot read the maxmemory-policy');
      expect(warnings[0]).not.toContain('secret-pass-1');
    } finally {
      await redis.client.call('ACL', 'DELUSER', user);
    }
  });
});

describe('a 3-master cluster', () => {
  let cluster: RedisClusterHandle;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(() => cluster?.stop());

  it('a master turned evicting after start: seen when its connections come back', async () => {
    const target = cluster.nodes[2] as { host: string; port: number };
    const node = new Redis(target.port, target.host);
    const started = await startActors({ cluster: cluster.nodes, groups: 4, logDir: tempDir() });
    try {
      const name = `${target.host}:${target.port}`;
      expect(started.servers().map((s) => s.server)).toContain(name);
      expect(started.servers().some((s) => s.evicting)).toBe(false);
      await setPolicy(node, 'allkeys-lru');
      await node.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      const seen = await waitFor(
        'the re-check',
        () => started.servers().find((s) => s.server === name && s.evicting),
        10_000,
      );
      expect(seen.policy).toBe('allkeys-lru');
    } finally {
      await started.stop(0);
      await setPolicy(node, 'noeviction');
      node.disconnect();
    }
  });

  it('with one master on allkeys-lru: refused, naming that master', async () => {
    const evicting = cluster.nodes[1] as { host: string; port: number };
    const node = new Redis(evicting.port, evicting.host);
    try {
      await setPolicy(node, 'allkeys-lru');
      const failure = await startActors({ cluster: cluster.nodes, groups: 4, logDir: tempDir() })
        .then(async (started) => {
          await started.stop(0);
          return null;
        })
        .catch((error: Error & { code?: string }) => error);
      expect(failure?.code).toBe('ERR_SKYQ_EVICTION');
      expect(failure?.message).toContain(
        `${evicting.host}:${evicting.port} has maxmemory-policy allkeys-lru`,
      );
    } finally {
      await setPolicy(node, 'noeviction');
      node.disconnect();
    }
  });
});
