/**
 * The `more:` hint of `skyq list` and `skyq dlq list` is a command to copy: it repeats the
 * connection flags the command was given (--redis, --cluster, --sentinel…, TLS files) beside the
 * layout ones, a password masked as *** for the user to put back. It left them out, so the copy
 * read another Redis (the default one) and said "cannot reach Redis".
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { againFlags } from '../src/cli/common.js';
import { Queue } from '../src/index.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { CLI, runCli } from './helpers/runtime.js';

const PASSWORD = 'hint-PW-42';

describe('the more: hint', () => {
  let server: RedisServerHandle;
  let masked: string;
  const layout = ['--prefix', 'hint', '--groups', '2'];

  beforeAll(async () => {
    server = await startStandalone({ password: PASSWORD });
    masked = server.url.replace(PASSWORD, '***');
    const queue = new Queue({ redis: server.url, prefix: 'hint', groups: 2 });
    try {
      for (let i = 0; i < 2; i++) {
        await queue.add(`dead ${i}`, { group: 1, attempts: 1 });
        const [message] = await queue.claim(1, 1);
        if (!message) throw new Error('nothing claimed');
        await queue.fail(message, new Error('refused'));
      }
    } finally {
      await queue.close();
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  /** The hint's command run by a shell, `skyq` being this CLI and *** the password again. */
  const runHint = (hint: string) => {
    const command = hint.replace(/^more: skyq /, '').replace('***', PASSWORD);
    return spawnSync('sh', ['-c', `node "$SKYQ_CLI" ${command}`], {
      env: { ...process.env, SKYQ_CLI: CLI, REDIS_URL: '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
  };

  for (const [name, args] of [
    ['list dead', ['list', 'dead']],
    ['dlq list', ['dlq', 'list']],
  ] as const) {
    it(`${name}: repeats --redis, its password masked, and the copy reads the next page`, async () => {
      const first = await runCli([...args, '--limit', '1', '--redis', server.url, ...layout]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).not.toContain(PASSWORD);
      const hint = first.stdout.trimEnd().split('\n').at(-1) as string;
      expect(hint).toMatch(
        new RegExp(
          `^more: skyq ${args.join(' ')} --redis '${masked.replaceAll('*', '\\*')}' --prefix hint --groups 2 --limit 1 --after \\S+$`,
        ),
      );
      const next = runHint(hint);
      expect(next.stderr).toBe('');
      expect(next.status).toBe(0);
      // Newest first: the first page showed the later letter, the copy shows the earlier one.
      expect(first.stdout).toContain('dead 1');
      expect(next.stdout).toContain('dead 0');
      expect(next.stdout).not.toContain('dead 1');
    });
  }

  it('list: an --id-prefix a shell would expand ($) goes into the hint as it was given', async () => {
    const queue = new Queue({ redis: server.url, prefix: 'hint', groups: 2 });
    try {
      for (const id of ['$HOMEx1', '$HOMEx2', '$HOMEy']) {
        await queue.add(id, { id, group: 0, delay: 60_000 });
      }
    } finally {
      await queue.close();
    }
    const where = ['--redis', server.url, ...layout];
    const first = await runCli([
      'list',
      'delayed',
      '--id-prefix',
      '$HOMEx',
      '--limit',
      '1',
      ...where,
    ]);
    expect(first.code, first.stderr).toBe(0);
    const hint = first.stdout.trimEnd().split('\n').at(-1) as string;
    expect(hint).toContain("--id-prefix '$HOMEx'");
    const next = runHint(hint);
    expect([next.status, next.stderr]).toEqual([0, '']);
    expect(first.stdout).toContain('$HOMEx1');
    expect(next.stdout).toContain('$HOMEx2');
    expect(next.stdout).not.toContain('$HOMEy');
  });

  it('repeats --cluster, --sentinel, --sentinel-master and TLS files, quoted for a shell', () => {
    expect(
      againFlags({
        sentinel: '10.0.0.1:26379,10.0.0.2:26379',
        sentinelMaster: 'my master',
        tlsCa: '/etc/ssl/ca.pem',
        tlsCert: "/home/o'brien/cert.pem",
        tlsKey: 'key.pem',
        prefix: 'jobs',
        groups: '10',
        scoreUnit: 's',
      }),
    ).toEqual([
      '--sentinel',
      '10.0.0.1:26379,10.0.0.2:26379',
      '--sentinel-master',
      "'my master'",
      '--tls-ca',
      '/etc/ssl/ca.pem',
      '--tls-cert',
      `'/home/o'\\''brien/cert.pem'`,
      '--tls-key',
      'key.pem',
      '--prefix',
      'jobs',
      '--score-unit',
      's',
    ]);
    expect(againFlags({ cluster: 'a:7000,b:7001' })).toEqual(['--cluster', 'a:7000,b:7001']);
    expect(againFlags({ redis: 'rediss://ops:s3cr3t@db:6380/2?password=x' })).toEqual([
      '--redis',
      "'rediss://ops:***@db:6380/2?password=***'",
    ]);
  });
});
