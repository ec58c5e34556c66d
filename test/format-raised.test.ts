/**
 * A newer skyq raises the data format under running clients (issue 25, 2): every format key
 * one up, as its ready() does (`<prefix>:format` and each slot's copy). Then:
 * - every claim stops within 2 s: a raw ZADD member (no add script to refuse it) is not taken,
 *   and each actor logs one line naming both formats;
 * - every add is refused with ERR_SKYQ_FORMAT naming both formats;
 * - a waitFor reader keeps waiting (it is not told a wrong ending), the dashboard says why it
 *   cannot read the groups, and no key of the groups changes;
 * - with the formats set back, everything resumes: the raw member is handled, adds go in, the
 *   waitFor resolves.
 * Before: a running launcher kept claiming on newer data (3,618 jobs in the probe) and old
 * producers were never refused; only a restart was.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { Queue, SkyqError, startActors } from '../src/index.js';
import { FORMAT_VERSION, formatKeys } from '../src/queue/format.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, recorded, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const GROUPS = 2;

async function setFormat(prefix: string, format: number) {
  for (const key of formatKeys(prefix, GROUPS)) await redis.client.set(key, String(format));
}

/** Every key of the groups, dumped: what a refused call must not change. */
async function snapshot(prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let g = 0; g < GROUPS; g++) {
    for (const name of [
      'delayed',
      'ready',
      'active',
      'dead',
      'msg',
      'due',
      'done',
      'hist',
    ] as const) {
      const key = keyOf(prefix, g, name);
      const dump = await redis.client.dumpBuffer(key);
      if (dump) out.set(key, dump.toString('hex'));
    }
  }
  return out;
}

describe('a newer skyq raises the data format under running clients', () => {
  it('claims stop, adds are refused, nothing changes; set back, everything resumes', async () => {
    const prefix = freshPrefix('fmt');
    const options = { redis: redis.server.url, prefix, groups: GROUPS };
    const logDir = tempDir();
    const launcher = await startActors({
      ...options,
      logDir,
      handler: fixture('record.mjs'),
      http: { listen: '127.0.0.1:0' },
    });
    const producer = new Queue(options);
    const reader = new Queue(options);
    try {
      await producer.add({ list: 'fmt' }, { id: 'before' });
      await waitFor(
        'a job before',
        async () => (await recorded(redis.client, 'fmt')).length === 1 || undefined,
      );
      const waited = await producer.add({ list: 'fmt' }, { id: 'waited', delay: 3_600_000 });
      const waiting = reader.waitFor(waited, { timeoutMs: 60_000 });
      await sleep(300);

      await setFormat(prefix, FORMAT_VERSION + 1);
      const raisedAt = Date.now();
      const refused = await producer.add({ list: 'fmt' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SkyqError);
      expect(refused).toMatchObject({ code: 'ERR_SKYQ_FORMAT' });
      expect((refused as Error).message).toMatch(
        new RegExp(
          `a newer skyq \\(format ${FORMAT_VERSION + 1}, in .+\\) is running on this Redis; this skyq \\(format ${FORMAT_VERSION}\\)`,
        ),
      );
      await sleep(2000);
      for (let g = 0; g < GROUPS; g++) {
        const log = readFileSync(join(logDir, `actor-${g}.log`), 'utf8');
        const lines = log.split('\n').filter((line) => line.includes('"format-newer"'));
        expect(lines, `actor ${g}`).toHaveLength(1);
        expect(lines[0]).toContain(
          `a newer skyq (format ${FORMAT_VERSION + 1}) is running on this Redis; this launcher (format ${FORMAT_VERSION}) stops claiming`,
        );
      }
      // A raw member nobody's add script can refuse: no claim may take it now.
      await redis.client.zadd(keyOf(prefix, 0, 'delayed'), 0, 'raw-after');
      const before = await snapshot(prefix);
      await sleep(2000);
      expect(await snapshot(prefix)).toEqual(before);
      expect(await recorded(redis.client, 'fmt')).toEqual(['before']);
      const stats = await launcher.stats();
      expect(stats.actors.map((a) => a.stat?.state)).toEqual(['halted', 'halted']);
      const overview = await (
        await fetch(new URL('/api/overview?since=0', launcher.http?.url))
      ).json();
      expect(JSON.stringify(overview)).toMatch(/a newer skyq/);
      expect(Date.now() - raisedAt).toBeLessThan(10_000);

      await setFormat(prefix, FORMAT_VERSION);
      await producer.reschedule(waited, { delay: 0 });
      await producer.add({ list: 'fmt' }, { id: 'after' });
      await waitFor(
        'everything handled again',
        async () => {
          const done = await recorded(redis.client, 'fmt');
          return done.length === 3 || undefined;
        },
        10_000,
      );
      expect((await recorded(redis.client, 'fmt')).sort()).toEqual(['after', 'before', 'waited']);
      expect(await waiting).toMatchObject({ state: 'done' });
      await waitFor(
        'the raw member',
        async () => (await producer.get('raw-after'))?.state === 'done' || undefined,
      );
    } finally {
      await Promise.all([producer.close(), reader.close()]);
      await launcher.stop();
    }
  });
});

describe('an event entry of a newer format', () => {
  it('fails waitFor and events() with ERR_SKYQ_FORMAT instead of being misread', async () => {
    const prefix = freshPrefix('fmt');
    const queue = new Queue({ redis: redis.server.url, prefix, groups: 1 });
    try {
      const id = await queue.add('x', { delay: 3_600_000 });
      const waiting = queue.waitFor(id, { timeoutMs: 10_000 }).catch((e: unknown) => e);
      const events = (async () => {
        for await (const _ of queue.events({ from: 'now' })) return 'an event';
        return 'the end';
      })().catch((e: unknown) => e);
      await sleep(300);
      // How a later format marks its entries (format.ts): \xffe<format>.
      const mark = Buffer.concat([Buffer.from([0xff]), Buffer.from(`e${FORMAT_VERSION + 1}`)]);
      await redis.client.xadd(
        keyOf(prefix, 0, 'fin'),
        '*',
        mark,
        'done',
        Buffer.from([0xff, 0x6d]),
        '',
        id,
        '',
      );
      for (const outcome of [await waiting, await events]) {
        expect(outcome).toMatchObject({ code: 'ERR_SKYQ_FORMAT' });
        expect((outcome as Error).message).toContain(`format ${FORMAT_VERSION + 1}`);
      }
    } finally {
      await queue.close();
    }
  });
});
