/**
 * The ACL rule of src/redis/acl.ts is enough, and named when it is missing: a Redis ACL user
 * with exactly that rule adds, consumes (real actors), reads stats and dead letters, with no
 * entry in Redis's ACL LOG; a user missing a key pattern gets ERR_SKYQ_NOPERM naming the rule.
 * The rule also covers every command the Lua scripts call.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, SkyqError } from '../src/index.js';
import {
  aclKeyPatterns,
  aclRule,
  aclSetUser,
  CLIENT_COMMANDS,
  SCRIPT_COMMANDS,
} from '../src/redis/acl.js';
import { startActors } from '../src/start.js';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import {
  FIXTURE_ENV,
  fixture,
  recorded,
  removeTempDirs,
  runCli,
  tempDir,
  waitFor,
} from './helpers/runtime.js';

const PREFIX = 'acl_q';
let server: RedisServerHandle;
let admin: Redis;

const urlOf = (user: string) => `redis://${user}:pw-${user}@127.0.0.1:${server.port}`;
async function makeUser(user: string, rule: string): Promise<void> {
  await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>pw-${user}`, ...rule.split(' '));
}

beforeAll(async () => {
  server = await startStandalone();
  admin = new Redis(server.url);
  process.env[FIXTURE_ENV] = server.url; // the fixture handler records as the admin
  await makeUser('skyq', aclRule(PREFIX));
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
  removeTempDirs();
});

describe('a user with exactly the rule', () => {
  it('adds, consumes with real actors, and reads stats, without one refused command', async () => {
    const url = urlOf('skyq');
    const queue = new Queue({ redis: url, prefix: PREFIX, groups: 3 });
    const launcher = await startActors({
      redis: url,
      prefix: PREFIX,
      groups: 3,
      handler: fixture('record.mjs'),
      logDir: tempDir(),
    });
    try {
      await queue.ready();
      // One body and the dead letter are over 64 KiB: spilled to keys of their own (SET, MGET).
      const pad = 'p'.repeat(70 * 1024);
      const ids = await queue.addBulk(
        Array.from({ length: 30 }, (_, i) => ({
          body: i === 0 ? { list: 'acl:done', pad } : { list: 'acl:done', pad: '' },
          options: { delay: i * 10 },
        })),
      );
      const dead = await queue.add({ fail: 'no', pad }, { attempts: 1 });
      await waitFor('every message done', async () =>
        (await recorded(admin, 'acl:done')).length >= ids.length ? true : undefined,
      );
      expect(new Set(await recorded(admin, 'acl:done'))).toEqual(new Set(ids));
      await waitFor('the dead letter', async () =>
        (await queue.deadLetters.list()).length === 1 ? true : undefined,
      );
      expect((await queue.get(dead))?.state).toBe('dead');

      const flags = ['--redis', url, '--prefix', PREFIX, '--groups', '3'];
      const stats = await waitFor('the launcher in stats', async () => {
        const run = await runCli(['stats', ...flags, '--json']);
        expect(run.stderr).toBe('');
        const parsed = JSON.parse(run.stdout) as { launchers: { launcherId: string }[] };
        return parsed.launchers.length === 1 ? parsed : undefined;
      });
      expect(stats.launchers[0]?.launcherId).toBe(launcher.id);
      const produced = await runCli(['produce', ...flags, '--delay', '0s'], 'x\nquit\n');
      expect(produced.stderr).toBe('');
      expect(produced.code).toBe(0);
      const listed = await runCli(['dlq', 'list', ...flags, '--json']);
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id: dead }]);
      const purged = await runCli(['dlq', 'purge', ...flags, '--yes']);
      expect(purged.stderr).toBe('');
      expect(purged.stdout).toContain('purged 1');
      // Done and purged: their body keys went with them.
      expect(await admin.keys(`{${PREFIX}:*}:body:*`)).toEqual([]);
    } finally {
      await launcher.stop();
      await queue.close();
    }
    // Redis logs every command and key it refused a user.
    const refused = (await admin.call('ACL', 'LOG')) as unknown[][];
    expect(refused.map((entry) => entry.map(String).join(' '))).toEqual([]);
  });
});

describe('a user without the rule', () => {
  it('gets ERR_SKYQ_NOPERM naming the rule, from the library and from the CLI', async () => {
    const [, braces] = aclKeyPatterns(PREFIX) as [string, string];
    await makeUser('partial', aclRule(PREFIX).replace(` ${braces}`, ''));
    const url = urlOf('partial');
    const queue = new Queue({ redis: url, prefix: PREFIX, groups: 3 });
    try {
      const error = await queue.cancel('some-id').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SkyqError);
      expect(error).toMatchObject({ code: 'ERR_SKYQ_NOPERM' });
      expect((error as Error).message).toContain('NOPERM');
      expect((error as Error).message).toContain(aclSetUser(PREFIX));
    } finally {
      await queue.close();
    }
    const cli = await runCli(['dlq', 'list', '--redis', url, '--prefix', PREFIX, '--groups', '3']);
    expect(cli.code).toBe(1);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).toContain(`A skyq user needs this ACL rule: ${aclSetUser(PREFIX)}`);
    expect(cli.stderr).not.toContain('pw-partial');
  });

  it('names the rule when a command a Lua script calls is refused', async () => {
    await makeUser('nozcard', aclRule(PREFIX).replace(' +zcard', ''));
    const queue = new Queue({ redis: urlOf('nozcard'), prefix: PREFIX, groups: 3 });
    try {
      const [first] = await queue.counts(); // a group that cannot be read says why
      expect(first?.error).toMatch(
        /^Redis refused a command: ERR The user executing the script can't run this command or subcommand\. A skyq user needs this ACL rule: ACL SETUSER/,
      );
    } finally {
      await queue.close();
    }
  });
});

describe('the rule', () => {
  it('names every command the Lua scripts call', () => {
    const luaDir = fileURLToPath(new URL('../src/lua/', import.meta.url));
    // Quoted upper-case words are commands or their flags (WITHSCORES, LIMIT). INCR is taken
    // for the command: as a ZADD flag it would only ask for one command too many.
    const flags = new Set([
      'WITHSCORES',
      'LIMIT',
      'BYSCORE',
      'BYLEX',
      'REV',
      'NX',
      'XX',
      'GT',
      'LT',
      'CH',
      'MAXLEN',
      'COUNT', // HSCAN's (flow-sweep.lua)
    ]);
    const words = new Set<string>();
    for (const file of readdirSync(luaDir).filter((f) => f.endsWith('.lua'))) {
      for (const [, word] of readFileSync(join(luaDir, file), 'utf8').matchAll(
        /['"]([A-Z][A-Z_]+)['"]/g,
      ))
        if (!flags.has(word as string)) words.add((word as string).toLowerCase());
    }
    const named = new Set<string>(SCRIPT_COMMANDS);
    expect([...words].filter((word) => !named.has(word))).toEqual([]);
    expect(words.size).toBeGreaterThan(5);
  });

  it('is the one docs/OPERATIONS.md and skyq acl show', async () => {
    const docs = readFileSync(new URL('../docs/OPERATIONS.md', import.meta.url), 'utf8');
    expect(docs).toContain(aclSetUser());
    const printed = await runCli(['acl', '--prefix', PREFIX, '--user', 'app']);
    expect(printed.stdout.trim()).toBe(aclSetUser(PREFIX, 'app'));
  });

  it('escapes glob characters of the prefix and is accepted by Redis for any prefix', async () => {
    expect(aclKeyPatterns('a*b')).toEqual(['~a\\*b:*', '~{a\\*b:*']);
    await makeUser('odd', aclRule('we?rd[1]'));
    const user = (await admin.call('ACL', 'GETUSER', 'odd')) as unknown[];
    expect(String(user)).toContain('~we\\?rd\\[1\\]:*');
    expect(CLIENT_COMMANDS).toContain('evalsha');
  });
});
