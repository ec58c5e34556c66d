/**
 * `skyq start` with no Redis named: it uses a Redis that answers at the default address,
 * or starts a private one there with its data on disk. Tested on a free port, since the
 * default one (6379) may belong to someone else on this machine.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { embeddedRedis, redisAnswers } from '../src/cli/embedded.js';
import { findFreePort } from '../src/redis/server.js';

const dir = mkdtempSync(join(tmpdir(), 'skyq-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('starts a private redis-server when nothing answers, and reuses one that does', async () => {
  const port = await findFreePort();
  const said: string[] = [];
  const first = await embeddedRedis((line) => said.push(line), { port, dir: join(dir, '.skyq') });
  try {
    expect(first.server).not.toBeNull();
    expect(first.url).toBe(`redis://127.0.0.1:${port}`);
    expect(said.join('\n')).toMatch(/started a private redis-server/);
    expect(await redisAnswers(first.url)).toBe(true);
    // appendonly: the data lives in the folder it named
    expect(existsSync(join(dir, '.skyq'))).toBe(true);
    expect(readdirSync(join(dir, '.skyq')).some((name) => name.startsWith('appendonly'))).toBe(
      true,
    );

    const again: string[] = [];
    const second = await embeddedRedis((line) => again.push(line), { port });
    expect(second.server).toBeNull();
    expect(again).toEqual([]);
  } finally {
    await first.server?.stop();
  }
  expect(await redisAnswers(first.url)).toBe(false);
});
