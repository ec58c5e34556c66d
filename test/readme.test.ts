// The README's library example must run as written: it names no Redis, so the library uses
// REDIS_URL, which the test sets (src/redis/default-redis.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStandalone } from './helpers/redis.js';

let server: Awaited<ReturnType<typeof startStandalone>>;
beforeAll(async () => {
  server = await startStandalone();
});
afterAll(async () => {
  await server?.stop();
});

it('runs the order time-out example from README.md', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  // The example is TypeScript (README shows it typed): its types are stripped, nothing else.
  const typed = /```ts\n(import \{ Queue \} from 'skyq';[\s\S]*?)```/.exec(readme)?.[1];
  expect(typed).toBeDefined();
  const example = transformSync(typed as string, { loader: 'ts', format: 'esm' }).code;
  // Inside the package folder, so `import 'skyq'` resolves to this package (self-reference).
  // A folder of its own: .test-tmp/ also holds the fault suite's results (reliability:doc).
  const dir = new URL('../.test-tmp/readme/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL('readme-example.mjs', dir);
  writeFileSync(file, example as string);
  try {
    const run = spawnSync(process.execPath, [file.pathname], {
      env: { ...process.env, REDIS_URL: server.url },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(['true', 'delayed']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
