// A launcher refuses data written by a newer skyq before it starts anything (issue 24, section
// 3: a launcher that started on a newer format passed every test, which tried only
// Queue.ready()). startActors rejects and `skyq start` exits 1, each with one line naming both
// formats; no message is claimed, no intake item moved, and the format key is left as it was.
// Real redis-server.
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { startActors } from '../src/index.js';
import { FORMAT_VERSION, formatKey } from '../src/queue/format.js';
import { fixture, recorded, runCli, tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const NEWER = FORMAT_VERSION + 1;

/** A prefix whose data says a newer format, with a due message and an intake item waiting. */
async function newerData(prefix: string): Promise<void> {
  await redis.client.set(formatKey(prefix), String(NEWER));
  await redis.client.zadd(
    keyOf(prefix, 0, 'delayed'),
    0,
    JSON.stringify({ list: `${prefix}:ran` }),
  );
  await redis.client.lpush(`${prefix}:inbox`, 'an intake item');
}

/** Nothing of the data moved: the message waits, unleased and unrun, and the item is there. */
async function expectUntouched(prefix: string): Promise<void> {
  expect(await redis.client.zcard(keyOf(prefix, 0, 'delayed'))).toBe(1);
  expect(await redis.client.zcard(keyOf(prefix, 0, 'active'))).toBe(0);
  expect(await recorded(redis.client, `${prefix}:ran`)).toEqual([]);
  expect(await redis.client.lrange(`${prefix}:inbox`, 0, -1)).toEqual(['an intake item']);
  expect(await redis.client.get(formatKey(prefix))).toBe(String(NEWER));
}

const refusal = (prefix: string) =>
  `a newer skyq (format ${NEWER}, in ${prefix}:format) is running on this Redis; this skyq (format ${FORMAT_VERSION}) neither reads nor writes its data: upgrade skyq before running it against this data`;

describe('a launcher on data of a newer format', () => {
  it('startActors rejects with one line naming both formats, and starts nothing', async () => {
    const prefix = 'newerlib';
    await newerData(prefix);
    const started = Date.now();
    const launching = startActors({
      redis: redis.server.url,
      prefix,
      groups: 2,
      handler: fixture('record.mjs'),
      intake: [`${prefix}:inbox`],
      logDir: tempDir(),
      publishStats: false,
    });
    const error = await launching.then(
      async (launcher) => {
        await launcher.stop();
        return null;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(refusal(prefix));
    expect((error as { code?: string }).code).toBe('ERR_SKYQ_FORMAT');
    expect(Date.now() - started).toBeLessThan(15_000);
    await expectUntouched(prefix);
  });

  it('skyq start exits 1 with that one line, and starts nothing', async () => {
    const prefix = 'newercli';
    await newerData(prefix);
    const out = await runCli(
      [
        'start',
        '--redis',
        redis.server.url,
        '--prefix',
        prefix,
        '--groups',
        '2',
        '--handler',
        fixture('record.mjs'),
        '--intake',
        `${prefix}:inbox`,
        '--log-dir',
        tempDir(),
      ],
      '',
      30_000,
    );
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')).toEqual([`skyq: ${refusal(prefix)}`]);
    expect(out.stdout).not.toMatch(/actors? ready/);
    await expectUntouched(prefix);
  });
});
