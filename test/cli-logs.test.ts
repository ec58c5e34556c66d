/**
 * Log files and `skyq logs`: the last line survives an immediate exit, files rotate by size
 * (also under a real `skyq start`), history and --follow come out in time order across
 * writers and across a rotation, and a readable line does not say its event twice.
 */
import {
  appendFileSync,
  existsSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeEvent, formatLogLine } from '../src/cli/log-format.js';
import { Queue } from '../src/index.js';
import { RotatingFile } from '../src/runtime/log-file.js';
import {
  finish,
  ROOT,
  runCli,
  spawnCli,
  spawnNode,
  tempDir,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** A JSON line like an actor writes. */
const line = (time: number, group: number, n: number) =>
  `${JSON.stringify({ level: 30, time, group, event: 'consumed', job: `${group}:${n}`, body: `m${n}`, lateMs: 1, msg: 'consumed' })}\n`;

const timesOf = (out: string) =>
  out
    .trim()
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => Date.parse(`${text.slice(0, 23).replace(' ', 'T')}Z`));

describe('log files', () => {
  it('keep the last line when the process exits right after flush()', async () => {
    // pino's async destination opened the file lazily: flush() before the open threw, the
    // error was swallowed, and process.exit() lost the line (the launcher's "stopped").
    const dir = tempDir();
    const script = join(dir, 'exit-at-once.mjs');
    const logger = join(ROOT, 'dist/src/runtime/logger.js');
    writeFileSync(
      script,
      `const { fileLogger } = await import(${JSON.stringify(logger)});
       const log = fileLogger(process.argv[2], { launcher: true });
       log.logger.info({ event: 'stopped' }, 'launcher stopped');
       log.flush();
       process.exit(0);`,
    );
    for (const n of [1, 2, 3]) {
      const file = join(dir, `launcher-${n}.log`);
      const run = await finish(spawnNode(script, [file]));
      expect(existsSync(file) ? readFileSync(file, 'utf8') : '').toMatch(/"event":"stopped"/);
      expect(run.stderr).toBe('');
    }
  });

  it('rotate by size, keeping a bounded number of older files', () => {
    const file = join(tempDir(), 'actor-0.log');
    const out = new RotatingFile(file, { maxBytes: 1000, keep: 2 });
    const base = Date.now();
    for (let n = 0; n < 100; n++) {
      out.write(line(base + n, 0, n));
      if (n % 5 === 4) out.flush();
    }
    out.close();
    expect(existsSync(`${file}.1`)).toBe(true);
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
    for (const f of [file, `${file}.1`, `${file}.2`])
      expect(statSync(f).size).toBeLessThanOrEqual(1000);
    // Oldest file first, the lines follow on without a gap, ending with the last one.
    const kept = [`${file}.2`, `${file}.1`, file].flatMap((f) =>
      readFileSync(f, 'utf8').trim().split('\n'),
    );
    const numbers = kept.map((text) => Number(JSON.parse(text).job.split(':')[1]));
    expect(numbers.at(-1)).toBe(99);
    expect(numbers).toEqual(numbers.map((_, i) => 99 - numbers.length + 1 + i));
  });

  it('stay bounded under a running skyq start (SKYQ_LOG_MAX_BYTES, SKYQ_LOG_KEEP)', async () => {
    const logDir = tempDir();
    const flags = ['--redis', redis.server.url, '--prefix', 'rot', '--groups', '1'];
    const starter = spawnCli(['start', ...flags, '--log-dir', logDir], {
      SKYQ_LOG_MAX_BYTES: '4096',
      SKYQ_LOG_KEEP: '2',
    });
    const queue = new Queue({ redis: redis.server.url, prefix: 'rot', groups: 1 });
    try {
      await waitFor('start to be ready', () =>
        /1 actor ready/.test(starter.stdout()) ? true : undefined,
      );
      await queue.addBulk(Array.from({ length: 300 }, (_, n) => ({ body: `message ${n}` })));
      await waitFor('every message consumed', async () => {
        const [counts] = await queue.counts();
        return counts && counts.ready + counts.active === 0 ? true : undefined;
      });
      starter.child.kill('SIGTERM');
      expect((await starter.done).code).toBe(0);
      const live = join(logDir, 'actor-0.log');
      expect(existsSync(`${live}.2`)).toBe(true);
      expect(existsSync(`${live}.3`)).toBe(false);
      // 300 consumed lines are ~45 KB; what is kept is at most 3 files of 4 KB.
      const kept = [live, `${live}.1`, `${live}.2`].reduce((sum, f) => sum + statSync(f).size, 0);
      for (const f of [live, `${live}.1`, `${live}.2`])
        expect(statSync(f).size).toBeLessThanOrEqual(4096);
      expect(kept).toBeLessThanOrEqual(3 * 4096);
      const shown = await runCli(['logs', '--actor', '0', '--log-dir', logDir]);
      expect(shown.code).toBe(0);
      const consumed = [...shown.stdout.matchAll(/ body=message (\d+) /g)].map((m) => Number(m[1]));
      expect(consumed.length).toBeGreaterThan(10);
      // The newest survive (handlers run 100 at a time, so the last lines are of the last few).
      expect(Math.max(...consumed)).toBe(299);
      expect(shown.stdout).toMatch(/actor 0 stopped/);
    } finally {
      starter.child.kill('SIGKILL');
      await queue.close();
    }
  });
});

describe('skyq logs', () => {
  it('reads rotated files and merges writers in time order', async () => {
    const dir = tempDir();
    const t = Date.now() - 60_000;
    writeFileSync(join(dir, 'actor-0.log.1'), line(t, 0, 0) + line(t + 2, 0, 2));
    writeFileSync(join(dir, 'actor-0.log'), line(t + 4, 0, 4));
    writeFileSync(
      join(dir, 'actor-1.log'),
      line(t + 1, 1, 1) + line(t + 3, 1, 3) + line(t + 5, 1, 5),
    );
    writeFileSync(join(dir, 'notes.txt'), 'not a log\n');
    const run = await runCli(['logs', '--log-dir', dir]);
    expect(run.code).toBe(0);
    expect([...run.stdout.matchAll(/job=(\d:\d)/g)].map((m) => m[1])).toEqual([
      '0:0',
      '1:1',
      '0:2',
      '1:3',
      '0:4',
      '1:5',
    ]);
    const one = await runCli(['logs', '--log-dir', dir, '--actor', '0']);
    expect([...one.stdout.matchAll(/job=(\d:\d)/g)].map((m) => m[1])).toEqual([
      '0:0',
      '0:2',
      '0:4',
    ]);
    const missing = await runCli(['logs', '--log-dir', dir, '--actor', '7']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('actor: no log file actor-7.log');
  });

  it('--follow interleaves the writers by time, across a rotation, and prints all on Ctrl-C', async () => {
    const dir = tempDir();
    const [zero, one] = [join(dir, 'actor-0.log'), join(dir, 'actor-1.log')];
    writeFileSync(zero, '');
    writeFileSync(one, '');
    const follower = spawnCli(['logs', '--follow', '--log-dir', dir]);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // started and polling
    // Each writer appends its lines in batches, as the actors do: a batch of one writer
    // holds times that fall between the other writer's lines.
    let n = 0;
    for (let batch = 0; batch < 8; batch++) {
      const t = Date.now();
      let zeros = '';
      let ones = '';
      for (let i = 0; i < 5; i++) {
        zeros += line(t + 2 * i, 0, n++);
        ones += line(t + 2 * i + 1, 1, n++);
      }
      if (batch === 4) renameSync(zero, `${zero}.1`); // the writer rotates: a new live file
      appendFileSync(zero, zeros);
      appendFileSync(one, ones);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await waitFor('every line followed', () =>
      (follower.stdout().match(/job=/g) ?? []).length >= 70 ? true : undefined,
    );
    follower.child.kill('SIGINT'); // the held lines come out before it exits
    const result = await follower.done;
    expect(result.code).toBe(0);
    const jobs = [...result.stdout.matchAll(/job=(\d+):(\d+)/g)].map((m) => Number(m[2]));
    expect(jobs).toHaveLength(80);
    expect(new Set(jobs).size).toBe(80);
    const times = timesOf(result.stdout);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});

describe('skyq logs --follow and Ctrl-C', () => {
  it('ends cleanly (exit 0) also while what the files hold is still printing', async () => {
    // Before, its Ctrl-C handler came only once the history was printed: a Ctrl-C meanwhile
    // (a loaded clean-clone run sent one there) killed it by the signal.
    const dir = tempDir();
    const t = Date.now() - 60_000;
    writeFileSync(
      join(dir, 'actor-0.log'),
      Array.from({ length: 200_000 }, (_, n) => line(t + n, 0, n)).join(''),
    );
    const follower = spawnCli(['logs', '--follow', '--log-dir', dir]);
    await waitFor('the first lines', () =>
      follower.stdout().includes('job=0:') ? true : undefined,
    );
    follower.child.kill('SIGINT');
    const result = await follower.done;
    expect(result.code).toBe(0);
    expect((result.stdout.match(/job=/g) ?? []).length).toBeLessThan(200_000); // still printing
  });
});

describe('a readable log line', () => {
  it('says the event once', () => {
    const text = formatLogLine(
      JSON.stringify({
        level: 30,
        time: 0,
        group: 3,
        event: 'consumed',
        job: '3:1',
        body: 'hi',
        lateMs: 2,
        msg: 'consumed',
      }),
      { minLevel: 30 },
    );
    expect(text).toBe('1970-01-01 00:00:00.000 INFO  actor 3 consumed job=3:1 body=hi lateMs=2');
    expect(describeEvent('started', 'actor started')).toBe('started');
    expect(describeEvent('stopped', 'launcher stopped')).toBe('stopped');
    expect(describeEvent('crash', 'actor 2 crashed')).toBe('crashed');
    expect(describeEvent('paused', 'group paused')).toBe('group paused');
    expect(describeEvent('dead', 'malformed message dead-lettered')).toBe(
      'malformed message dead-lettered',
    );
    expect(describeEvent('dead', 'handler failed')).toBe('dead: handler failed');
    expect(describeEvent('error', 'poll failed')).toBe('error: poll failed');
    expect(describeEvent(undefined, 'hello')).toBe('hello');
    expect(describeEvent('done', '')).toBe('done');
  });

  it('escapes control characters from bodies and shows an error by its message', () => {
    const text = formatLogLine(
      JSON.stringify({
        level: 50,
        time: 0,
        group: 1,
        event: 'error',
        msg: 'poll failed',
        body: '\u001b[31mred',
        err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' },
      }),
      { minLevel: 30 },
    );
    expect(text).toBe(
      '1970-01-01 00:00:00.000 ERROR actor 1 error: poll failed body="\\u001b[31mred" err=boom',
    );
  });
});
