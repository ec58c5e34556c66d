/**
 * TLS against a real `redis-server --port 0 --tls-port …` with a CA, a server and a client
 * certificate made by openssl in a temporary directory: plain TLS (`tls-auth-clients no`) and
 * mTLS (`tls-auth-clients yes`, Redis's default) through the CLI flags, the environment and the
 * library option; the actors and the coordinator over mTLS; and a CA that did not sign the
 * server's certificate failing fast, in one line.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { connect } from '../src/redis/connection.js';
import { heldPort } from './helpers/redis.js';
import { finish, removeTempDirs, runCli, spawnCli, tempDir, waitFor } from './helpers/runtime.js';

const dir = tempDir('skyq-tls-');
const file = (name: string) => join(dir, name);
const servers: ChildProcess[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, and a certificate it signs for `name` (server: 127.0.0.1 and localhost). */
function makeCertificates(): void {
  for (const ca of ['ca', 'other-ca']) {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=skyq test ${ca}`,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
    );
  }
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const name of ['server', 'client']) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=skyq test ${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    );
  }
}

const pem = (name: string) => readFileSync(file(name), 'utf8');
const trusted = () => ({ ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') });

/** A TLS-only redis-server; resolves its port once it answers over TLS. */
async function startTlsServer(authClients: 'yes' | 'no'): Promise<number> {
  const port = await heldPort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      file('server.crt'),
      '--tls-key-file',
      file('server.key'),
      '--tls-ca-cert-file',
      file('ca.crt'),
      '--tls-auth-clients',
      authClients,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  servers.push(child);
  await waitFor(
    `redis-server TLS on ${port}`,
    async () => {
      const client = connect({
        redis: `rediss://127.0.0.1:${port}`,
        tls: trusted(),
        failFast: true,
      });
      try {
        // Ours, not a stranger's: the answer must come from the child just started.
        const info = (await client.info('server')) as string;
        return /process_id:(\d+)/.exec(info)?.[1] === String(child.pid) ? true : undefined;
      } catch {
        return undefined;
      } finally {
        client.disconnect();
      }
    },
    10_000,
    100,
  );
  return port;
}

/** How long the CLI takes with no Redis at all (skyq acl): a busy machine starts Node slowly. */
async function startupMs(): Promise<number> {
  const started = Date.now();
  await runCli(['acl']);
  return Date.now() - started;
}

let tlsPort: number; // tls-auth-clients no
let mtlsPort: number; // tls-auth-clients yes

beforeAll(async () => {
  // Debian's redis-server is built with TLS; a build without it would refuse --tls-port.
  makeCertificates();
  [tlsPort, mtlsPort] = [await startTlsServer('no'), await startTlsServer('yes')];
});
afterAll(() => {
  for (const child of servers) child.kill('SIGKILL');
  removeTempDirs();
});

describe('plain TLS (tls-auth-clients no)', () => {
  it('works from the CLI with --tls-ca, and with SKYQ_TLS_CA and a redis:// URL', async () => {
    const flagged = await runCli([
      'stats',
      '--redis',
      `rediss://127.0.0.1:${tlsPort}`,
      '--tls-ca',
      file('ca.crt'),
    ]);
    expect(flagged.stderr).toBe('');
    expect(flagged.code).toBe(0);
    const child = spawnCli(
      ['produce', '--redis', `redis://127.0.0.1:${tlsPort}`, '--delay', '1h'],
      {
        SKYQ_TLS_CA: file('ca.crt'),
      },
    );
    const produced = await finish(child, 'over tls\nquit\n');
    expect(produced.stderr).toBe('');
    expect(produced.stdout).toMatch(/^added \S+/m);
  });

  it('works from the library with the tls option', async () => {
    const queue = new Queue({ redis: `rediss://127.0.0.1:${tlsPort}`, tls: { ca: pem('ca.crt') } });
    try {
      const id = await queue.add('hello', { delay: 60_000 });
      expect((await queue.get(id))?.state).toBe('delayed');
    } finally {
      await queue.close();
    }
  });

  it('fails within 5 s, in one line, when the CA did not sign the server certificate', async () => {
    for (const command of [['stats'], ['start', '--log-dir', dir]]) {
      const what = command.join(' ');
      const startup = await startupMs();
      const started = Date.now() + startup;
      const run = await runCli([
        ...command,
        '--redis',
        `rediss://127.0.0.1:${tlsPort}`,
        '--tls-ca',
        file('other-ca.crt'),
      ]);
      expect(Date.now() - started, what).toBeLessThan(5000); // beyond Node's own start-up
      expect(run.code, what).toBe(1);
      const lines = run.stderr.trim().split('\n');
      expect(lines, what).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^skyq: cannot reach Redis at rediss://127.0.0.1:${tlsPort}: TLS: the server's certificate is not trusted \\(.+\\): give the CA that signed it`,
        ),
      );
    }
  });

  it('names a TLS file it cannot read', async () => {
    const run = await runCli([
      'stats',
      '--redis',
      `rediss://127.0.0.1:${tlsPort}`,
      '--tls-ca',
      file('missing.crt'),
    ]);
    expect(run.code).toBe(1);
    // One line, then where the flag's help is.
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^skyq: --tls-ca: cannot read the file \(ENOENT\) \(got "\/tmp\/.*"\)$/,
      ),
      'see skyq stats --help',
    ]);
  });
});

describe('mTLS (tls-auth-clients yes)', () => {
  it('runs the actors, the coordinator and the CLI with a client certificate', async () => {
    const url = `rediss://127.0.0.1:${mtlsPort}`;
    const tlsFlags = [
      '--tls-ca',
      file('ca.crt'),
      '--tls-cert',
      file('client.crt'),
      '--tls-key',
      file('client.key'),
    ];
    const logDir = tempDir();
    const start = spawnCli([
      'start',
      '--redis',
      url,
      ...tlsFlags,
      '--groups',
      '2',
      '--log-dir',
      logDir,
    ]);
    try {
      await waitFor(
        'the launcher',
        () => {
          if (start.child.exitCode !== null) throw new Error(start.stderr());
          return /actors? ready/.test(start.stdout()) ? true : undefined;
        },
        30_000,
      );
      // Client certificate from the environment this time.
      const env = {
        SKYQ_TLS_CA: file('ca.crt'),
        SKYQ_TLS_CERT: file('client.crt'),
        SKYQ_TLS_KEY: file('client.key'),
      };
      const produced = await finish(
        spawnCli(['produce', '--redis', url, '--groups', '2', '--delay', '0s'], env),
        'mutual\nquit\n',
      );
      expect(produced.stderr).toBe('');
      const id = /added (\S+)/.exec(produced.stdout)?.[1] as string;
      await waitFor('the message consumed', () => {
        const logs = [0, 1].map((g) => {
          try {
            return readFileSync(join(logDir, `actor-${g}.log`), 'utf8');
          } catch {
            return '';
          }
        });
        return logs.join('').includes(`"job":"${id}"`) ? true : undefined;
      });
      const stats = await waitFor('the launcher in stats', async () => {
        const run = await runCli(['stats', '--redis', url, ...tlsFlags, '--groups', '2', '--json']);
        const parsed = JSON.parse(run.stdout) as { launchers: unknown[] };
        return parsed.launchers.length === 1 ? parsed : undefined;
      });
      expect(stats.launchers).toHaveLength(1);
      start.child.kill('SIGINT');
      const stopped = await finish(start, '', 30_000);
      expect(stopped.stderr).toBe('');
      expect(stopped.code).toBe(0);
    } finally {
      start.child.kill('SIGKILL');
    }
  });

  it('without a client certificate fails in one line', async () => {
    const startup = await startupMs();
    const started = Date.now() + startup;
    const run = await runCli([
      'stats',
      '--redis',
      `rediss://127.0.0.1:${mtlsPort}`,
      '--tls-ca',
      file('ca.crt'),
    ]);
    expect(Date.now() - started).toBeLessThan(5000); // beyond Node's own start-up
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^skyq: cannot reach Redis at rediss://127.0.0.1:${mtlsPort}: .*client certificate`,
      ),
    );
  });

  it('a cluster client gives the TLS options to every node connection', () => {
    const cluster = connect(
      { cluster: [{ host: '127.0.0.1', port: mtlsPort }], tls: trusted() },
      { lazy: true },
    ) as Cluster;
    expect(cluster.options.redisOptions?.tls).toMatchObject({
      ca: pem('ca.crt'),
      cert: pem('client.crt'),
    });
    cluster.disconnect();
  });
});
