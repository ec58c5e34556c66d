/**
 * A `skyq` command loads what it uses, not every command's code: the runtime (pino, piscina,
 * comlink), the HTTP server (prom-client) and the bench (cli-progress, hdr-histogram-js) load
 * only in the commands that run them. Each of these once loaded at every `skyq` run, half a
 * second of CPU before `--version` printed. The CLI is a bundle split into chunks
 * (scripts/build.mjs): a child process notes every file it loads (a module hook for ES modules,
 * require.cache for CommonJS), and a chunk holds the packages esbuild names in it (a
 * `// ../node_modules/<package>/…` line before each file it bundled).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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

const PACKAGE = /node_modules\/((?:@[^/]+\/)?[^/]+)\//g;

/** The packages in a loaded file: its own, or for one of the CLI's chunks those bundled in it. */
function packagesIn(file: string): string[] {
  const own = [...file.matchAll(PACKAGE)].map((m) => m[1] as string);
  if (own.length > 0) return own.slice(-1);
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\/\/ \S*node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map(
    (m) => m[1] as string,
  );
}

describe('what a skyq command loads', () => {
  let server: RedisServerHandle;
  let preload: string;
  let dir: string;

  beforeAll(async () => {
    server = await startStandalone();
    dir = tempDir('skyq-load-');
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
       export async function load(url, context, next) {
         if (url.startsWith('file:')) appendFileSync(process.env.SKYQ_TEST_LOADED, url + '\\n');
         return next(url, context);
       }`,
    );
    preload = join(dir, 'preload.mjs');
    writeFileSync(
      preload,
      `import { register, createRequire } from 'node:module';
       import { appendFileSync } from 'node:fs';
       register(${JSON.stringify(pathToFileURL(hooks).href)});
       const require = createRequire(import.meta.url);
       process.on('exit', () => {
         const files = Object.keys(require.cache).map((f) => 'file://' + f + '\\n');
         appendFileSync(process.env.SKYQ_TEST_LOADED, files.join(''));
       });`,
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** The packages `skyq <args>` loaded, by itself or in the chunks of the CLI it loaded. */
  const packagesOf = async (name: string, args: string[]): Promise<string[]> => {
    const out = join(dir, `${name}.txt`);
    writeFileSync(out, '');
    await finish(spawnNode(CLI, args, { SKYQ_TEST_LOADED: out }, ['--import', preload]));
    const files = readFileSync(out, 'utf8').trim().split('\n');
    expect(files).toContain(pathToFileURL(CLI).href); // the hook saw the CLI load
    return [...new Set(files.flatMap((url) => packagesIn(fileURLToPath(url))))];
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
