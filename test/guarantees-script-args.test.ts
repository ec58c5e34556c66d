/**
 * README, Guarantees: "Every script checks its input." Each Lua script in src/lua is sent
 * malformed ARGV directly (EVAL of the text the loader makes: args.lua, lib.lua and the
 * script), as a buggy or foreign client would: arguments missing, not numbers, negative,
 * huge, or too many. Each call must answer one error line that names what is wrong, and
 * change no key at all: Redis keeps the writes a script made before it failed, so a script
 * that stumbles half-way can leave a message out of every set. The same calls with the
 * arguments mended run without error (in another database), so each case is refused for the
 * argument it breaks, not for another.
 */
import { readdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { groupKeys } from '../src/base/keys.js';
import type { Message } from '../src/index.js';
import { INTAKE_SCRIPTS, intakeScriptSource } from '../src/redis/intake-scripts.js';
import { MULTI_GROUP_SCRIPTS, SCRIPT_NAMES, scriptSource } from '../src/redis/scripts.js';
import { claimAtLeast, useQueueRedis } from './helpers/queue.js';
import { type Args, casesOf } from './helpers/script-arg-cases.js';

const redis = useQueueRedis();

type Script = { name: string; source: string; keys(prefix: string): string[] };

const scripts: Script[] = [
  ...SCRIPT_NAMES.map((name) => ({
    name,
    source: scriptSource(name),
    keys: (prefix: string) => groupKeys(prefix, 0),
  })),
  {
    name: 'format',
    source: scriptSource('format'),
    keys: (prefix: string) => [`${prefix}:format`],
  },
  {
    name: 'watch-many',
    source: scriptSource('watch-many'),
    keys: (prefix: string) => [`${prefix}:0`],
  },
  {
    name: 'ratelimit-take',
    source: scriptSource('ratelimit-take'),
    keys: (prefix: string) => [`{${prefix}:rate}:index`, `{${prefix}:rate}:b:all`],
  },
  {
    name: 'ratelimit-list',
    source: scriptSource('ratelimit-list'),
    keys: (prefix: string) => [`{${prefix}:rate}:index`],
  },
  ...Object.entries(INTAKE_SCRIPTS).map(([name, count]) => ({
    name: `intake-${name}`,
    source: intakeScriptSource(name as keyof typeof INTAKE_SCRIPTS),
    keys: (prefix: string) =>
      Array.from({ length: count }, (_, i) => `{${prefix}:intake-list}:k${i}`),
  })),
];

/** Every key of the server with its exact value (DUMP) and whether it expires. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of (await redis.plain.keysBuffer('*')).sort(Buffer.compare)) {
    const value = await redis.plain.dumpBuffer(key);
    const ttl = await redis.plain.pttl(key);
    out.set(key.toString('latin1'), `${value?.toString('hex')} ${ttl > 0 ? 'expires' : ttl}`);
  }
  return out;
}

/**
 * A call's reply or error text. A script that loops on a huge count would hold Redis for
 * good: after 3 s it is killed (SCRIPT KILL, from another connection) and reported as hung.
 */
async function guarded(
  call: () => Promise<unknown>,
): Promise<{ value: unknown } | { error: string }> {
  const reply = call().then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), 3000);
  });
  const first = await Promise.race([reply, hung]);
  clearTimeout(timer);
  if (first !== 'hung') return first;
  // No ready check: its INFO would be refused with BUSY, and the kill never sent.
  const killer = new Redis((redis.target as { redis: string }).redis, { enableReadyCheck: false });
  const killed = await killer.script('KILL').then(
    () => 'killed',
    (error: Error) => error.message,
  );
  killer.disconnect();
  await reply;
  return { value: `still running after 3 s (${killed})` };
}

describe('every Lua script refuses malformed arguments', () => {
  it('has cases for every script file in src/lua', () => {
    const shared = new Set([
      'args',
      'format-guard',
      'claim-lib',
      'cancel-lib',
      'lib',
      'lib-ids',
      'lib-held',
      'previews',
      'events',
      'flow-lib',
      'history',
      'dedupe',
      'schedule-lib',
    ]);
    const files = readdirSync(new URL('../src/lua/', import.meta.url))
      .map((file) => file.replace(/\.lua$/, ''))
      .filter((name) => !shared.has(name));
    expect(scripts.map((s) => s.name).sort()).toEqual(files.sort());
    expect(MULTI_GROUP_SCRIPTS.length).toBe(4); // format, watch-many and the two above
  });

  it('answers one line naming the argument and changes no key', async () => {
    // A group with something in every state, so that any write would show in the snapshot.
    const q = await redis.queue({ groups: 1 });
    const prefix = q.config.prefix;
    await q.add('waiting', { id: 'args-delayed', delay: 3_600_000 });
    await q.add('urgent', { id: 'args-ready', priority: 2 });
    await q.add('x'.repeat(70_000), { id: 'args-spilled', delay: 3_600_000 });
    await q.add('leased', { id: 'args-leased' });
    await q.add('dies', { id: 'args-dead' });
    await q.add('done', { id: 'args-done' });
    const leased = await claimAtLeast(q, 0, 4);
    const byId = (id: string) => leased.find((m) => m.id === id) as Message;
    await q.fail(byId('args-dead'), new Error('boom'), { retry: false });
    await q.ack([byId('args-done')]);
    await q.schedules.upsert('args-tick', { every: 3_600_000, group: 0 });
    await redis.plain.rpush(`{${prefix}:intake-list}:k0`, 'item');
    await redis.plain.set(`{${prefix}:intake-list}:k1`, '0');
    const held = byId('args-leased');
    const fill = (argv: Args, target: string) =>
      argv.map((arg) =>
        arg === '$id' ? held.id : arg === '$tok' ? held.token : arg === '$prefix' ? target : arg,
      );

    let before = await snapshot();
    expect(before.size).toBeGreaterThan(15);
    const accepted: string[] = [];
    const wrongError: string[] = [];
    const refused: string[] = []; // well-formed calls that failed
    const mended = new Redis((redis.target as { redis: string }).redis, { db: 1 });
    let calls = 0;
    for (const script of scripts) {
      const { valid, bad } = casesOf(script.name);
      for (const [what, argv] of bad) {
        calls++;
        const keys = script.keys(prefix);
        const reply = await guarded(() =>
          redis.plain.eval(script.source, keys.length, ...keys, ...fill(argv, prefix)),
        );
        if (!('error' in reply)) {
          accepted.push(`${script.name} with ${what}: answered ${JSON.stringify(reply.value)}`);
        } else if (
          !/^ERR skyq: (ARGV\[\d+\] .+, got |wrong number of arguments)/.test(reply.error)
        ) {
          wrongError.push(`${script.name} with ${what}: ${reply.error.split(' script: ')[0]}`);
        }
        const after = await snapshot();
        const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
          (key) => before.get(key) !== after.get(key),
        );
        // Put back whatever changed, so one script's writes do not hide the next one's.
        if (changed.length > 0) {
          accepted.push(`${script.name} with ${what}: changed ${changed.join(', ')}`);
          await redis.plain.flushdb();
          for (const [key, value] of before) {
            const [hex, ttl] = value.split(' ') as [string, string];
            await redis.plain.restore(Buffer.from(key, 'latin1'), 0, Buffer.from(hex, 'hex'));
            if (ttl === 'expires')
              await redis.plain.pexpire(Buffer.from(key, 'latin1'), 86_400_000);
          }
          // A restored hash may dump its fields in another order: compare with it from now on.
          before = await snapshot();
        }
      }
      // The mended call runs (in database 1, away from the snapshot): the cases above
      // break only what they say.
      const keys = script.keys(prefix);
      await mended
        .eval(script.source, keys.length, ...keys, ...fill(valid, prefix))
        .catch((error: Error) =>
          refused.push(`${script.name}: ${error.message.split(' script: ')[0]}`),
        );
    }
    mended.disconnect();
    expect({ accepted, wrongError, refused }).toEqual({
      accepted: [],
      wrongError: [],
      refused: [],
    });
    expect(calls).toBeGreaterThan(150);
  }, 240_000); // well-formed scripts answer at once; a script that hangs costs 3 s a call
});
