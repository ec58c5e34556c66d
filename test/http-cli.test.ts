// The CLI side: `skyq start --http` and `skyq dashboard`, run from dist/ as a user would.
import { describe, expect, it } from 'vitest';
import { httpOptions } from '../src/cli/dashboard.js';
import { finish, spawnCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const TOKEN = 'cli-token-that-must-not-show';

/** The URL a running command printed. */
const printedUrl = (stdout: () => string) =>
  waitFor('the URL line', () => /on (http:\/\/\S+\/)/.exec(stdout())?.[1], 20_000);

describe('skyq start --http', () => {
  it('serves /metrics on the address given, behind the token, and never prints the token', async () => {
    const run = spawnCli([
      'start',
      '--redis',
      redis.server.url,
      '--groups',
      '2',
      '--log-dir',
      tempDir(),
      '--http',
      '127.0.0.1:0',
      '--auth-token',
      TOKEN,
    ]);
    try {
      const url = await printedUrl(run.stdout);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect((await fetch(new URL('/metrics', url))).status).toBe(401);
      const metrics = await fetch(new URL('/metrics', url), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(await metrics.text()).toContain('skyq_actor_up{group="1"} 1');
    } finally {
      run.child.kill('SIGTERM');
    }
    const result = await finish(run);
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });

  it('refuses an open address without a token in one line, at once', async () => {
    const started = Date.now();
    const result = await finish(
      spawnCli([
        'start',
        '--redis',
        redis.server.url,
        '--log-dir',
        tempDir(),
        '--http',
        '0.0.0.0:0',
      ]),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'skyq: http: http://0.0.0.0:0/ is reachable from other machines: give --auth-token or set SKYQ_DASHBOARD_TOKEN\nsee skyq start --help',
    );
  });

  it('takes a bare --http as the default address', () => {
    expect(httpOptions({ http: true })).toEqual({});
    expect(httpOptions({ http: '9000', authToken: 'x' })).toEqual({
      listen: '9000',
      authToken: 'x',
    });
  });
});

describe('skyq dashboard', () => {
  it('serves the page until stopped', async () => {
    const run = spawnCli(['dashboard', '--redis', redis.server.url, '--http', '127.0.0.1:0']);
    try {
      const url = await printedUrl(run.stdout);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>skyq dashboard</title>');
      const overview = await fetch(new URL('/api/overview', url));
      expect(await overview.json()).toMatchObject({ mode: 'redis', prefix: 'task_group' });
      const metrics = await fetch(new URL('/metrics', url));
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('# TYPE skyq_group_messages gauge');
      expect(run.stdout()).toMatch(/dashboard, \/metrics and \/healthz on http/);
    } finally {
      run.child.kill('SIGINT');
    }
    expect((await finish(run)).code).toBe(0);
  });

  it('says so in one line when Redis cannot be reached', async () => {
    const started = Date.now();
    const result = await finish(
      spawnCli(['dashboard', '--redis', 'redis://127.0.0.1:1', '--http', '127.0.0.1:0']),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'skyq: cannot reach Redis at redis://127.0.0.1:1: connection refused',
    );
  });
});
