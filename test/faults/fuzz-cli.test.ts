/**
 * Fuzz of the CLI: generated command lines for produce, get, reschedule, cancel, dlq and stats
 * (helpers/cli-cases.ts), and generated stdin bytes for `skyq produce` (helpers/stdin-cases.ts),
 * each run as a real `skyq` child against a private redis-server (REDIS_URL; a generated --redis
 * only ever names nothing reachable). Never a stack trace; a failure is one clear first line and
 * exit code 1; bad input always fails and names what is wrong; what produce adds is exactly what
 * its rules say, byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { type RedisServerHandle, startStandalone } from '../helpers/redis.js';
import { type CliResult, finish, spawnCli } from '../helpers/runtime.js';
import { type CliCase, cliCase } from './helpers/cli-cases.js';
import { fuzzSeed, Rng } from './helpers/fuzz.js';
import { saveFuzz } from './helpers/results.js';
import { type StdinCase, stdinCase } from './helpers/stdin-cases.js';

const ARG_CASES = 60;
const STDIN_CASES = 25;
const AT_ONCE = 3;
const PASSWORD = 'hunter2'; // in some generated --redis URLs: it must never be shown

let server: RedisServerHandle;
let queue: Queue;

beforeAll(async () => {
  server = await startStandalone();
  queue = new Queue({ redis: server.url });
  await queue.ready();
});

afterAll(async () => {
  await queue?.close();
  await server?.stop();
});

/** Runs `cases` through `run`, AT_ONCE at a time; resolves the results in order. */
async function pool<T, R>(cases: T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await run(cases[i] as T);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return results;
}

const STACK = /\n\s+at .+:\d+:\d+\)?$|node:internal|\bTypeError\b|\bReferenceError\b/m;

function skyq(args: string[], input: string | Buffer = ''): Promise<CliResult> {
  const run = spawnCli(args, { REDIS_URL: server.url, NO_COLOR: '1' });
  run.child.stdin?.on('error', () => undefined); // a command that exits early closes stdin
  return finish(run, input as string, 20_000);
}

/** What is wrong with a finished run, as short strings (none: all good). */
function problemsOf(c: CliCase, r: CliResult): string[] {
  const out = `${r.stdout}\n${r.stderr}`;
  const first = r.stderr.split('\n').find((line) => line.trim() !== '') ?? '';
  const problems: string[] = [];
  if (r.signal !== null || (r.code !== 0 && r.code !== 1))
    problems.push(`ended ${r.signal ?? r.code}`);
  if (STACK.test(out)) problems.push('stack trace');
  if (out.includes(PASSWORD)) problems.push('password shown');
  if (r.code !== 0 && !/^(skyq: |error: )/.test(first))
    problems.push(`unclear first line "${first}"`);
  if (r.code !== 0 && first.length > 400) problems.push('first line over 400 characters');
  if (c.verdict === 'bad' && r.code !== 1) problems.push('bad input accepted');
  if (c.verdict === 'bad' && r.code === 1 && !c.names.some((n) => first.includes(n)))
    problems.push(`does not name ${c.names.join(' or ')}`);
  if (c.verdict === 'ok' && c.mustSucceed && r.code !== 0) problems.push('valid input refused');
  return problems;
}

describe('skyq with generated arguments', () => {
  it(`${ARG_CASES} command lines: clear errors for bad input, never a stack`, async () => {
    const rng = new Rng(fuzzSeed('CLI arguments'));
    const cases = Array.from({ length: ARG_CASES }, () => cliCase(rng));
    const results = await pool(cases, (c) => skyq(c.args));
    const failures = cases.flatMap((c, i) => {
      const r = results[i] as CliResult;
      const problems = problemsOf(c, r);
      if (problems.length === 0) return [];
      const first = r.stderr.split('\n').find((l) => l.trim()) ?? '';
      return [{ case: i, args: c.args, verdict: c.verdict, problems, code: r.code, first }];
    });
    expect(failures).toEqual([]);
    const verdicts = cases.map((c) => c.verdict);
    for (const v of ['ok', 'bad', 'maybe'] as const) expect(verdicts).toContain(v);
    saveFuzz({
      key: '10-fuzz-cli-arguments',
      what: `command lines for produce, get, reschedule, cancel, dlq and stats: ${verdicts.filter((v) => v === 'bad').length} bad, ${verdicts.filter((v) => v === 'ok').length} valid, ${verdicts.filter((v) => v === 'maybe').length} either`,
      cases: ARG_CASES,
      seed: rng.seed,
      checked:
        'exit 0 or 1; no stack trace; a failure starts with one clear line; bad input exits 1 naming the culprit; valid input succeeds; no password shown',
    });
  });
});

/** Compares a produce run with its case: what was added (bodies, in order) and refused. */
async function produceProblems(c: StdinCase, r: CliResult): Promise<string[]> {
  const problems: string[] = [];
  const out = `${r.stdout}\n${r.stderr}`;
  if (STACK.test(out)) problems.push('stack trace');
  const ids = [...r.stdout.matchAll(/^added (.+)$/gm)].map((m) => m[1] as string);
  const refused = [...r.stderr.matchAll(/^refused line (\d+): /gm)].map((m) => Number(m[1]));
  if (JSON.stringify(refused) !== JSON.stringify(c.refused))
    problems.push(`refused lines ${refused} (expected ${c.refused})`);
  const expectedCode = c.refused.length > 0 ? 1 : 0;
  if (r.code !== expectedCode) problems.push(`exit ${r.code} (expected ${expectedCode})`);
  if (ids.length !== c.added.length)
    problems.push(`${ids.length} added (expected ${c.added.length})`);
  const infos = await Promise.all(ids.map((id) => queue.get(id)));
  infos.forEach((info, i) => {
    const want = JSON.stringify(c.added[i]);
    if (JSON.stringify(info?.body) !== want)
      problems.push(
        `message ${i + 1}: body ${JSON.stringify(info?.body)?.slice(0, 60)} (expected ${want.slice(0, 60)})`,
      );
  });
  return problems;
}

describe('skyq produce with generated stdin', () => {
  it(`${STDIN_CASES} inputs: exactly the lines its rules accept, byte for byte`, async () => {
    const rng = new Rng(fuzzSeed('produce stdin'));
    const cases = Array.from({ length: STDIN_CASES }, () => stdinCase(rng));
    const results = await pool(cases, (c) =>
      skyq(
        [
          'produce',
          '--delay',
          '1h',
          '--max-line',
          String(c.maxLine),
          ...(c.json ? ['--json'] : []),
        ],
        c.input,
      ),
    );
    const failures = [];
    for (const [i, c] of cases.entries()) {
      const problems = await produceProblems(c, results[i] as CliResult);
      if (problems.length > 0)
        failures.push({
          case: i,
          json: c.json,
          input: c.input.toString('hex').slice(0, 120),
          problems,
        });
    }
    expect(failures).toEqual([]);
    const lines = cases.reduce((n, c) => n + c.input.toString('latin1').split('\n').length, 0);
    const added = cases.reduce((n, c) => n + c.added.length, 0);
    const refused = cases.reduce((n, c) => n + c.refused.length, 0);
    saveFuzz({
      key: '11-fuzz-produce-stdin',
      what: `stdin of skyq produce (${cases.filter((c) => c.json).length} in --json mode): ~${lines} lines, ${added} to add, ${refused} to refuse`,
      cases: STDIN_CASES,
      seed: rng.seed,
      checked:
        'the lines refused are exactly the over-long, non-UTF-8 and (--json) invalid ones, by number; every other line added in order with its exact text as the body; exit 1 iff a line was refused',
    });
  });
});
