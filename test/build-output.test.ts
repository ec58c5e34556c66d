/**
 * What `npm run build` must produce: each worker entry a single bundled file (a thread that
 * resolves and compiles hundreds of module files costs ~0.4 CPU-s to start), and a library and
 * CLI that load nothing but their runtime dependencies (BullMQ and bee-queue are
 * devDependencies for the comparison benchmarks only). Reads the build in dist/.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/runtime.js';

const WORKERS = ['actor', 'coordinator', 'handler-task'];
/** Started from V8's code cache (src/runtime/bundle-start.ts): a CommonJS bundle and an entry. */
const BUNDLED = ['actor', 'coordinator'];
const builtins = new Set(builtinModules);
const isBuiltin = (path: string) => path.startsWith('node:') || builtins.has(path);

/** Every import of `entry`'s module graph that esbuild left outside it (packages, built-ins). */
async function externalImports(
  entry: string,
  format: 'esm' | 'cjs' = 'esm',
): Promise<{ files: string[]; externals: string[] }> {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format,
    packages: 'external',
    logLevel: 'silent',
  });
  const inputs = (result.metafile as Metafile).inputs;
  const externals = new Set<string>();
  for (const input of Object.values(inputs)) {
    for (const imported of input.imports) if (imported.external) externals.add(imported.path);
  }
  return { files: Object.keys(inputs), externals: [...externals] };
}

const packageName = (path: string) =>
  path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : (path.split('/')[0] as string);

describe('npm run build', () => {
  it.each(WORKERS)(
    'bundles workers/%s.ts into one file that imports only Node built-ins',
    async (name) => {
      const cjs = BUNDLED.includes(name);
      const file = join('dist/workers', cjs ? `${name}.bundle.cjs` : `${name}.js`);
      expect(existsSync(join(ROOT, file)), `${file} missing: run npm run build`).toBe(true);
      const { files, externals } = await externalImports(file, cjs ? 'cjs' : 'esm');
      expect(files).toEqual([file]);
      expect(externals.filter((path) => !isBuiltin(path))).toEqual([]);
    },
  );

  it.each(BUNDLED)(
    'starts dist/workers/%s.js by its bundle, named by its hash, through bundle-start alone',
    async (name) => {
      const entry = readFileSync(join(ROOT, 'dist/workers', `${name}.js`), 'utf8');
      const bundle = readFileSync(join(ROOT, 'dist/workers', `${name}.bundle.cjs`));
      const hash = createHash('sha256').update(bundle).digest('hex').slice(0, 16);
      expect(entry).toContain(`hash: '${hash}'`);
      expect(entry).toContain(`new URL('./${name}.bundle.cjs', import.meta.url)`);
      // Strict as the ES modules it is made of: the directive counts only as the first statement.
      expect(bundle.toString('utf8', 0, 13)).toBe("'use strict';");
      // What the entry loads before the bundle: one small module of Node built-ins only.
      const { files, externals } = await externalImports(join('dist/workers', `${name}.js`));
      expect(files.sort()).toEqual(['dist/src/runtime/bundle-start.js', `dist/workers/${name}.js`]);
      expect(externals.filter((path) => !isBuiltin(path))).toEqual([]);
      // No declarations of tsc's for an entry that exports nothing.
      expect(existsSync(join(ROOT, 'dist/workers', `${name}.d.ts`))).toBe(false);
    },
  );

  it('ships the CLI as its bundle alone: main.js and its chunks, importing the bench and piscina outside', () => {
    const dir = join(ROOT, 'dist/src/cli');
    const names = readdirSync(dir);
    expect(names).toContain('main.js');
    // tsc's modules of src/cli are in the bundle: none is shipped beside it.
    expect(names.filter((name) => name !== 'main.js' && !/^chunk-\w+\.js$/.test(name))).toEqual([]);
    const code = names.map((name) => readFileSync(join(dir, name), 'utf8')).join('\n');
    // Each chunk imports only Node built-ins, the other chunks, the bench (dist/bench/) and
    // piscina, which starts its threads from a file beside its own code.
    const imported = [
      /^(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)";/gm, // static: import { a } from "…";
      /^import\s*"([^"]+)";/gm, // for its effects alone
      /\bimport\("([^"]+)"\)/g, // a command's code, loaded in its action
    ].flatMap((pattern) => [...code.matchAll(pattern)].map((m) => m[1] as string));
    const others = imported.filter(
      (path) =>
        !isBuiltin(path) && !/^\.\/chunk-\w+\.js$/.test(path) && !path.startsWith('../../bench/'),
    );
    expect(others).toEqual(['piscina']);
    expect(imported).toContain('../../bench/skyq.js');
  });

  it('puts the Lua scripts where both the library and the worker bundles read them', () => {
    // src/redis/scripts.ts reads new URL('../lua/', import.meta.url): dist/src/lua from the
    // library, dist/lua from a bundle in dist/workers.
    for (const dir of ['dist/src/lua', 'dist/lua']) {
      expect(readFileSync(join(ROOT, dir, 'claim.lua'), 'utf8')).toBe(
        readFileSync(join(ROOT, 'src/lua/claim.lua'), 'utf8'),
      );
    }
  });

  it('the library and the skyq CLI (bench included) load only runtime dependencies', async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const runtime = new Set(Object.keys(manifest.dependencies));
    for (const entry of ['src/index.ts', 'src/cli/main.ts']) {
      const { externals } = await externalImports(entry);
      const packages = externals.filter((path) => !isBuiltin(path)).map(packageName);
      expect(packages.filter((name) => !runtime.has(name))).toEqual([]);
      expect(packages).toContain('ioredis');
    }
  });
});
