// The dashboard behind a TLS reverse proxy: --public-url (SKYQ_PUBLIC_URL) names the URL
// people open; its origin and host are accepted and no other foreign one is. And a malformed
// % escape in a path is the client's mistake: 400, before the token is even asked for.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { spawnCli, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const PUBLIC = 'https://queue.example.com';

/** A request to the loopback server carrying any Host and Origin (as a proxy forwards them). */
function send(
  port: number,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { 'content-type': 'application/json', 'x-skyq-request': '1', ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? '{"group":1}' : undefined);
  });
}

describe('--public-url', () => {
  let handle: HttpHandle;
  let plain: HttpHandle;
  const prefix = freshPrefix('proxy');
  beforeAll(async () => {
    handle = await serveDashboard(
      { redis: redis.server.url, prefix },
      { listen: '127.0.0.1:0', publicUrl: `${PUBLIC}/` },
    );
    plain = await serveDashboard({ redis: redis.server.url, prefix }, { listen: '127.0.0.1:0' });
  });
  afterAll(async () => {
    await handle?.close();
    await plain?.close();
  });

  it('accepts the public origin and host, and refuses other origins', async () => {
    const port = handle.address.port;
    const host = 'queue.example.com';
    const ok = await send(port, 'POST', '/api/groups/pause', { host, origin: PUBLIC });
    expect(ok.status, ok.body).toBe(200);
    expect((await send(port, 'GET', '/api/overview', { host })).status).toBe(200);
    for (const origin of [
      'https://attacker.example',
      'http://queue.example.com',
      'https://queue.example.com:8443',
    ]) {
      const refused = await send(port, 'POST', '/api/groups/resume', { host, origin });
      expect(refused.status, origin).toBe(403);
      expect(refused.body).toContain('another origin');
    }
    // Another foreign Host is still refused (DNS rebinding).
    expect((await send(port, 'GET', '/api/overview', { host: 'attacker.example' })).status).toBe(
      403,
    );
    const queue = new Queue({ redis: redis.server.url, prefix });
    expect((await queue.counts()).filter((c) => c.paused).map((c) => c.group)).toEqual([1]);
    await queue.resume();
    await queue.close();
  });

  it('without it, an HTTPS origin is refused with a hint', async () => {
    const refused = await send(plain.address.port, 'POST', '/api/groups/pause', {
      host: `127.0.0.1:${plain.address.port}`,
      origin: PUBLIC,
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('--public-url');
  });

  it('refuses a malformed URL with one line', async () => {
    await expect(
      serveDashboard({ redis: redis.server.url }, { listen: '127.0.0.1:0', publicUrl: 'ftp://x' }),
    ).rejects.toThrow('public-url: must start with https:// or http://');
  });

  it('skyq dashboard takes SKYQ_PUBLIC_URL', async () => {
    const run = spawnCli(
      ['dashboard', '--redis', redis.server.url, '--prefix', prefix, '--http', '127.0.0.1:0'],
      { SKYQ_PUBLIC_URL: PUBLIC },
    );
    try {
      const deadline = Date.now() + 15_000;
      while (
        !/dashboard, \/metrics and \/healthz on http:\/\/127\.0\.0\.1:(\d+)/.test(run.stdout()) &&
        Date.now() < deadline
      )
        await new Promise((resolve) => setTimeout(resolve, 50));
      const port = Number(
        /dashboard, \/metrics and \/healthz on http:\/\/127\.0\.0\.1:(\d+)/.exec(run.stdout())?.[1],
      );
      const host = 'queue.example.com';
      const ok = await send(port, 'POST', '/api/groups/resume', { host, origin: PUBLIC });
      expect(ok.status, run.stderr()).toBe(200);
      const refused = await send(port, 'POST', '/api/groups/resume', {
        host,
        origin: 'https://attacker.example',
      });
      expect(refused.status).toBe(403);
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });
});

describe('a malformed % escape', () => {
  let handle: HttpHandle;
  beforeAll(async () => {
    handle = await serveDashboard(
      { redis: redis.server.url },
      { listen: '127.0.0.1:0', authToken: 'a-token-long-enough' },
    );
  });
  afterAll(() => handle?.close());

  it('answers 400 before the token is asked for', async () => {
    const port = handle.address.port;
    const host = `127.0.0.1:${port}`;
    for (const path of ['/api/jobs/%zz', '/api/jobs/%E0%A4%A', '/%']) {
      const answer = await send(port, 'GET', path, { host });
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.body).error).toContain('malformed % escape');
    }
    // A well-formed path still needs the token.
    expect((await send(port, 'GET', '/api/jobs/abc', { host })).status).toBe(401);
  });
});
