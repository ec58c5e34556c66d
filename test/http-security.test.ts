// Who may use the HTTP server: loopback by default, a token off loopback (401 without it),
// changes only as same-origin JSON POSTs with the page's header, loopback names only (DNS
// rebinding), and headers that keep the page from loading or running anything foreign.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { startActors } from '../src/start.js';
import { httpLauncher, postJson } from './helpers/http.js';
import { freshPrefix } from './helpers/queue.js';
import { tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const TOKEN = 'test-token-with-some-length';

/** The same server through its loopback address (tests never send traffic elsewhere). */
const loopback = (handle: HttpHandle) => `http://127.0.0.1:${handle.address.port}/`;

describe('off loopback', () => {
  it('refuses to start without a token, before starting any actor', async () => {
    const started = Date.now();
    await expect(
      startActors({
        redis: redis.server.url,
        groups: 1,
        logDir: tempDir(),
        http: { listen: '0.0.0.0:0' },
      }),
    ).rejects.toThrow(
      'http: http://0.0.0.0:0/ is reachable from other machines: give --auth-token or set SKYQ_DASHBOARD_TOKEN',
    );
    expect(Date.now() - started).toBeLessThan(500);
  });

  describe('with a token', () => {
    let handle: HttpHandle;
    let base: string;
    beforeAll(async () => {
      handle = await serveDashboard(
        { redis: redis.server.url, prefix: freshPrefix() },
        { listen: '0.0.0.0:0', authToken: TOKEN },
      );
      base = loopback(handle);
    });
    afterAll(() => handle?.close());

    it('answers 401 to every request without it', async () => {
      for (const path of ['/healthz', '/metrics', '/api/overview', '/api/dead', '/app.js']) {
        const response = await fetch(new URL(path, base));
        expect(response.status, path).toBe(401);
      }
      const refused = await postJson(base, '/api/groups/pause', {});
      expect(refused.status).toBe(401);
      // The page itself answers 401 with the login form; the form's own files are open.
      const page = await fetch(base);
      expect(page.status).toBe(401);
      expect(await page.text()).toContain('This dashboard needs its token');
      expect((await fetch(new URL('/login.js', base))).status).toBe(200);
    });

    it('takes it as a bearer token, and refuses a wrong one', async () => {
      const right = await fetch(new URL('/healthz', base), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(right.status).toBe(200);
      const wrong = await fetch(new URL('/healthz', base), {
        headers: { authorization: `Bearer ${TOKEN}x` },
      });
      expect(wrong.status).toBe(401);
    });

    it('logs a browser in with a cookie that does not hold the token', async () => {
      expect((await postJson(base, '/login', { token: 'nope-nope-nope' })).status).toBe(401);
      const login = await postJson(base, '/login', { token: TOKEN });
      expect(login.status).toBe(204);
      const cookie = login.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/^skyq_session=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=\/$/);
      expect(cookie).not.toContain(TOKEN);
      const session = cookie.split(';')[0] as string;
      const page = await fetch(base, { headers: { cookie: session } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="/app.js">');
      const overview = await fetch(new URL('/api/overview', base), {
        headers: { cookie: session },
      });
      expect(overview.status).toBe(200);
    });
  });

  it('takes the token from SKYQ_DASHBOARD_TOKEN', async () => {
    process.env.SKYQ_DASHBOARD_TOKEN = TOKEN;
    try {
      const handle = await serveDashboard({ redis: redis.server.url }, { listen: '0.0.0.0:0' });
      try {
        const url = new URL('/healthz', loopback(handle));
        expect((await fetch(url)).status).toBe(401);
        const authorized = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(authorized.status).toBe(200);
      } finally {
        await handle.close();
      }
    } finally {
      delete process.env.SKYQ_DASHBOARD_TOKEN;
    }
  });

  it("guards a launcher's /metrics the same way", async () => {
    const { launcher } = await httpLauncher(redis.server.url, {
      groups: 1,
      http: { listen: '0.0.0.0:0', authToken: TOKEN },
    });
    try {
      const url = new URL('/metrics', loopback(launcher.http as HttpHandle));
      expect((await fetch(url)).status).toBe(401);
      const scraped = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('skyq_messages_done_total{group="0"} 0');
    } finally {
      await launcher.stop(0);
    }
  });
});

describe('on loopback', () => {
  let handle: HttpHandle;
  let queue: Queue;
  beforeAll(async () => {
    const prefix = freshPrefix();
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    handle = await serveDashboard(
      { redis: redis.server.url, prefix, groups: 2 },
      {
        listen: '127.0.0.1:0',
      },
    );
  });
  afterAll(async () => {
    await handle?.close();
    await queue?.close();
  });

  const paused = async () => (await queue.counts()).filter((c) => c.paused).map((c) => c.group);

  it('needs no token, and sends headers that keep the page its own', async () => {
    const page = await fetch(handle.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a change without the header, as a form post, or from another site', async () => {
    const attempts: [string, RequestInit][] = [
      ['no header', { headers: { 'content-type': 'application/json' } }],
      [
        'form post',
        { headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-skyq-request': '1' } },
      ],
      [
        'foreign origin',
        {
          headers: {
            'content-type': 'application/json',
            'x-skyq-request': '1',
            origin: 'http://attacker.example',
          },
        },
      ],
      [
        'cross-site fetch',
        {
          headers: {
            'content-type': 'application/json',
            'x-skyq-request': '1',
            'sec-fetch-site': 'cross-site',
          },
        },
      ],
    ];
    for (const [what, init] of attempts) {
      const response = await fetch(new URL('/api/groups/pause', handle.url), {
        method: 'POST',
        body: '{}',
        ...init,
      });
      expect(response.status, what).toBe(403);
    }
    expect(await paused()).toEqual([]);
    const get = await fetch(new URL('/api/groups/pause', handle.url));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await paused()).toEqual([]);
    // The page's own request goes through.
    const own = await postJson(
      handle.url,
      '/api/groups/pause',
      { group: 1 },
      {
        origin: new URL(handle.url).origin,
        'sec-fetch-site': 'same-origin',
      },
    );
    expect(own.status).toBe(200);
    expect(await paused()).toEqual([1]);
    await queue.resume(); // as this test found it
  });

  it('answers only loopback names (a rebound domain gets 403)', async () => {
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: handle.address.port,
            path: '/api/overview',
            headers: { host },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await status(`attacker.example:${handle.address.port}`)).toBe(403);
    expect(await status(`localhost:${handle.address.port}`)).toBe(200);
    expect(await status(`127.0.0.1:${handle.address.port}`)).toBe(200);
  });

  it('refuses a port that is taken, with a clear error', async () => {
    await expect(
      serveDashboard({ redis: redis.server.url }, { listen: `127.0.0.1:${handle.address.port}` }),
    ).rejects.toThrow(
      `http: cannot listen on 127.0.0.1:${handle.address.port}: the port is in use (another dashboard or program listens there); pick another`,
    );
  });
});
