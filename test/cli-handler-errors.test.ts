/**
 * A handler module that cannot load is explained in one line a newcomer can act on: a syntax
 * error names its file, line and column; ES module syntax in a `.js` that Node loads as CommonJS
 * says what to rename, without Node's own two-line warning first; a command table whose entry is
 * no function names that entry; a module that throws null, or a default object whose getter
 * throws, is named with what it threw. On the pool (`--pool`) the module is loaded before the
 * start says ready, and refuses it with the same line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServerHandle, startStandalone } from './helpers/redis.js';
import { CLI, finish, removeTempDirs, spawnNode, tempDir } from './helpers/runtime.js';

let server: RedisServerHandle;
let project: string;

beforeAll(async () => {
  server = await startStandalone();
  // As `npm init -y` leaves it: "type": "commonjs", so a .js file is CommonJS (with no "type"
  // at all, Node 20.19+ would see the ES module syntax and load it as one).
  project = tempDir('skyq-handler-errors-');
  writeFileSync(join(project, 'package.json'), '{ "name": "app", "type": "commonjs" }\n');
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** `skyq start --handler ./<file>` in the project, to its end; its stderr lines. */
async function startWith(file: string, source: string, more: string[] = []): Promise<string[]> {
  writeFileSync(join(project, file), source);
  const args = ['start', '--redis', server.url, '--groups', '1', '--log-dir', 'logs', ...more];
  const run = await finish(spawnNode(CLI, [...args, '--handler', `./${file}`], {}, [], project));
  expect(run.code, run.stdout).toBe(1);
  return run.stderr.split('\n').filter((line) => line.trim() !== '');
}

const failed = 'skyq: actor 0 failed to start: cannot load handler';

it('a syntax error names the file, line and column, CommonJS or ES module', async () => {
  const body = 'async (job) => {\n  const x = ;\n};\n';
  for (const [file, source] of [
    ['broken.cjs', `module.exports = ${body}`],
    ['broken.mjs', `export default ${body}`],
  ] as const) {
    const lines = await startWith(file, source);
    expect(lines).toEqual([
      `${failed} ${join(project, file)}: SyntaxError at line 2, column 13: Unexpected token ';'`,
    ]);
  }
});

it('a brace never closed names the line where the file ends, CommonJS or ES module', async () => {
  for (const [file, source] of [
    ['unclosed.cjs', 'module.exports = async (job) => {\n'],
    ['unclosed.mjs', 'export default async (job) => {\n'],
  ] as const) {
    const lines = await startWith(file, source);
    expect(lines).toEqual([
      `${failed} ${join(project, file)}: SyntaxError at line 2: Unexpected end of input`,
    ]);
  }
});

it('export default in a .js of a CommonJS package says what to do, without Node warning first', async () => {
  const lines = await startWith('handler.js', 'export default async (job) => {\n  job;\n};\n');
  expect(lines).toEqual([
    `${failed} ${join(project, 'handler.js')}: it uses ES module syntax (export, line 1), but Node loads a .js file as CommonJS here (${join(project, 'package.json')} says "type": "commonjs"): rename it handler.mjs, or write module.exports = … instead`,
  ]);
});

it('a command table entry that is no function is named', async () => {
  const lines = await startWith('table.cjs', 'module.exports = { foo: 1 };\n');
  expect(lines).toEqual([
    `skyq: actor 0 failed to start: handler ${join(project, 'table.cjs')}: \`foo\` is not a function (a command table maps job names to functions: { 'email.send': fn, '*': fallback })`,
  ]);
  const mixed = await startWith(
    'mixed.mjs',
    "export default { ok: async () => 1, 'bad.one': 'x' };\n",
  );
  expect(mixed[0]).toContain('`bad.one` is not a function');
});

it('a module that throws a non-Error at its top level, or whose export getter throws, is named', async () => {
  expect(await startWith('null.mjs', 'throw null;\n')).toEqual([
    `${failed} ${join(project, 'null.mjs')}: null`,
  ]);
  const getter = "export default { get a() { throw new Error('getter boom'); } };\n";
  expect(await startWith('getter.mjs', getter)).toEqual([
    `skyq: actor 0 failed to start: handler ${join(project, 'getter.mjs')}: reading its exports threw: getter boom`,
  ]);
});

it('on the pool, a module that cannot load refuses the start in the same one line', async () => {
  const path = join(project, 'pool-throws.mjs');
  expect(
    await startWith('pool-throws.mjs', "throw new Error('no db');\n", ['--pool', '1']),
  ).toEqual([`skyq: cannot load handler ${path}: no db`]);
  expect(await startWith('pool-42.mjs', 'export default 42;\n', ['--pool', '1'])).toEqual([
    `skyq: handler ${join(project, 'pool-42.mjs')} must export a default function (async (job) => {}) or a command table ({ 'email.send': fn, '*': fallback })`,
  ]);
});
