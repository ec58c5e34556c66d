/**
 * A skyq that only reads leaves the stored data format as it found it (raiseFormat: false, the
 * CLI's reading commands, `skyq dashboard`): in a roll, a newer `skyq stats` on a laptop must not
 * halt every older launcher. It still refuses a newer format; what it writes raises its group's.
 * Older data is set up as a format-7 skyq left it: `<prefix>:format` at 7, no copy in any slot.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { keyOf } from '../src/base/keys.js';
import { serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { FORMAT_VERSION, formatKey, formatKeys } from '../src/queue/format.js';
import { readsOnly, SCRIPT_NAMES } from '../src/redis/scripts.js';
import { runCli, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const GROUPS = 2;

/** Every format key of the prefix, as stored (null: missing). */
const stored = (prefix: string) =>
  Promise.all(formatKeys(prefix, GROUPS).map((key) => redis.client.get(key)));
const OLDER = ['7', ...Array(GROUPS + 2).fill(null)];

it("the CLI's reading commands and skyq dashboard leave an older format; a write raises it", async () => {
  const prefix = 'readers';
  await redis.client.set(formatKey(prefix), '7');
  await redis.client.zadd(`${prefix}:0`, Date.now() + 60_000, 'raw:1');
  const where = { redis: redis.server.url, prefix, groups: GROUPS };
  const flags = ['--redis', redis.server.url, '--prefix', prefix, '--groups', String(GROUPS)];
  for (const command of [
    ['stats'],
    ['get', 'raw:1'],
    ['list', 'delayed'],
    ['dlq', 'list'],
    ['schedules', 'list'],
  ]) {
    const out = await runCli([...command, ...flags]);
    expect(out.stderr, command.join(' ')).toBe('');
    expect(out.code, command.join(' ')).toBe(0);
    expect(await stored(prefix), command.join(' ')).toEqual(OLDER);
  }
  const dashboard = await serveDashboard(where, { listen: '127.0.0.1:0' });
  try {
    const response = await fetch(new URL('/api/overview', dashboard.url));
    expect(response.status).toBe(200);
    expect(await stored(prefix)).toEqual(OLDER);
  } finally {
    await dashboard.close();
  }
  // A write raises the format of the group it writes (format-guard.lua), and a Queue that may
  // write (the default) raises every key as it connects.
  await runCli(['cancel', 'raw:1', ...flags]);
  expect(await redis.client.get(keyOf(prefix, 0, 'format'))).toBe(String(FORMAT_VERSION));
  const writer = new Queue(where);
  try {
    await writer.ready();
    expect(new Set(await stored(prefix))).toEqual(new Set([String(FORMAT_VERSION)]));
  } finally {
    await writer.close();
  }
});

it('a Queue made with raiseFormat: false reads older data and leaves its format', async () => {
  const prefix = 'libreader';
  await redis.client.set(formatKey(prefix), '7');
  await redis.client.zadd(`${prefix}:0`, Date.now() + 60_000, 'raw:1');
  const reader = new Queue({ redis: redis.server.url, prefix, groups: GROUPS, raiseFormat: false });
  try {
    await reader.ready();
    expect((await reader.get('raw:1'))?.state).toBe('delayed');
    expect((await reader.list('delayed')).items).toHaveLength(1);
    expect(await reader.listCounts()).toMatchObject({ delayed: 1 });
    expect(await stored(prefix)).toEqual(OLDER);
  } finally {
    await reader.close();
  }
});

it('a reader still refuses a newer format, naming it', async () => {
  const prefix = 'newer';
  // As a newer skyq leaves it: every key raised (format-guard.lua raises each slot's copy).
  for (const key of formatKeys(prefix, GROUPS)) await redis.client.set(key, FORMAT_VERSION + 1);
  const reader = new Queue({ redis: redis.server.url, prefix, groups: GROUPS, raiseFormat: false });
  try {
    await expect(reader.ready()).rejects.toMatchObject({ code: 'ERR_SKYQ_FORMAT' });
  } finally {
    await reader.close();
  }
  const out = await runCli(['stats', '--redis', redis.server.url, '--prefix', prefix]);
  expect(out.code).toBe(1);
  expect(out.stderr).toMatch(/newer/);
});

it('the scripts whose header says read only write nothing themselves', () => {
  const writes =
    /redis\.call\('(SET|HSET|HDEL|ZADD|ZREM|DEL|UNLINK|RPUSH|LPUSH|LSET|LPOP|RPOP|INCR|INCRBY|XADD|EXPIRE|PEXPIRE|ZPOPMIN)'|\b(bulk|forget|publish|wake|pushWake)\(/;
  const readers = SCRIPT_NAMES.filter((name) =>
    readsOnly(readFileSync(new URL(`../src/lua/${name}.lua`, import.meta.url), 'utf8')),
  );
  expect(readers).toEqual(expect.arrayContaining(['inspect', 'list', 'counts', 'time']));
  for (const name of readers) {
    const text = readFileSync(new URL(`../src/lua/${name}.lua`, import.meta.url), 'utf8');
    expect(writes.exec(text)?.[0], name).toBeUndefined();
  }
});
