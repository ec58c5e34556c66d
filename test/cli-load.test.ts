/**
 * A `skyq` command loads what it uses, not every command's code: the runtime (pino, piscina,
 * comlink), the HTTP server (prom-client) and the bench (cli-progress, hdr-histogram-js) load
 * only in the commands that run them. Each of these once loaded at every `skyq` run, half a
 * second of CPU before `--version` printed. Read from the CommonJS packages a child process
 * holds at its exit (require.cache: ES module imports of CommonJS packages land there too).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { CLI, finish, spawnNode, tempDir } from './helpers/runtime.js';

const LOADED_ONLY_BY_THEIR_COMMANDS = [
  'pino',
  'piscina',
  'comlink',
  'prom-client',
  'cli-progress',
  'hdr-histogram-js',
];

describe('what a skyq command loads', () => {
  let server: RedisServerHandle;
  let preload: string;
  let dir: string;

  beforeAll(async () => {
    server = await startStandalone();
    dir = tempDir('skyq-load-');
    preload = join(dir, 'loaded.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => {
         const seen = new Set();
         for (const file of Object.keys(require.cache)) {
           const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file);
           if (m) seen.add(m[1]);
         }
         require('node:fs').writeFileSync(process.env.SKYQ_TEST_LOADED, JSON.stringify([...seen]));
       });`,
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** The packages `skyq <args>` held at its exit. */
  const packagesOf = async (name: string, args: string[]): Promise<string[]> => {
    const out = join(dir, `${name}.json`);
    await finish(spawnNode(CLI, args, { SKYQ_TEST_LOADED: out }, ['--require', preload]));
    return JSON.parse(readFileSync(out, 'utf8')) as string[];
  };

  it('--version loads commander and none of the runtime, the HTTP server or the bench', async () => {
    const loaded = await packagesOf('version', ['--version']);
    expect(loaded).toContain('commander'); // the reading works
    for (const name of LOADED_ONLY_BY_THEIR_COMMANDS) expect(loaded, name).not.toContain(name);
  });

  it('get talks to Redis (ioredis) without loading the runtime, the HTTP server or the bench', async () => {
    const loaded = await packagesOf('get', ['get', 'nothing-here', '--redis', server.url]);
    expect(loaded).toContain('ioredis');
    for (const name of LOADED_ONLY_BY_THEIR_COMMANDS) expect(loaded, name).not.toContain(name);
  });

  it('start --help still shows its defaults (the runtime loads only when it runs)', async () => {
    const help = await finish(spawnNode(CLI, ['start', '--help']));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--actor-nice <n>[\s\S]*\(default: "10"\)/);
    const bench = await finish(spawnNode(CLI, ['bench', '--help']));
    expect(bench.stdout).toMatch(/--batch <n>[\s\S]*\(default: "500"\)/);
  });
});
