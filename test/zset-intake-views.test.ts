/**
 * Issue 28 §3: the sorted-set intake from the command line, and where it shows. `skyq start
 * --zset-intake KEY:s,KEY:ms=1` says where each set goes; `skyq stats`, the dashboard's
 * overview and /metrics show each set beside the intake lists (members waiting, moved, rate,
 * and why it cannot be read); bad flag input is one clear line and nothing starts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { hashString } from '../src/base/keys.js';
import { sampleValue, scrape } from './helpers/http.js';
import { freshPrefix, redisNow } from './helpers/queue.js';
import {
  type CliChild,
  runCli,
  spawnCli,
  tempDir,
  untilStartReady,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();
const GROUPS = 4;

describe('sorted-set intake views', () => {
  const runs: CliChild[] = [];
  afterAll(async () => {
    for (const run of runs) {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });

  it('skyq start --zset-intake: its lines, then skyq stats, the overview and /metrics', async () => {
    const prefix = freshPrefix('zv');
    const jobs = `${prefix}:JOB_MESSAGE_QUEUE`;
    const seta = `${prefix}:seta`;
    const wrong = `${prefix}:wrong`;
    await redis.client.set(wrong, 'a string');
    const where = ['--redis', redis.server.url, '--prefix', prefix, '--groups', String(GROUPS)];
    const run = spawnCli([
      'start',
      ...where,
      '--zset-intake',
      `${jobs}:s,${seta}:ms=1,${wrong}:cs`,
      '--http',
      '127.0.0.1:0',
      '--log-dir',
      tempDir(),
    ]);
    runs.push(run);
    await untilStartReady(run);
    const url = await waitFor('the HTTP line', () => /on (http:\/\/\S+)/.exec(run.stdout())?.[1]);
    const lines = run
      .stdout()
      .split('\n')
      .filter((line) => line.includes('sorted set'));
    expect(lines).toEqual([
      `skyq: intake from sorted set ${jobs} (scores in s) into group ${hashString(jobs) % GROUPS}`,
      `skyq: intake from sorted set ${seta} (scores in ms) into group 1`,
      `skyq: intake from sorted set ${wrong} (scores in cs) into group ${hashString(wrong) % GROUPS}`,
    ]);

    const now = await redisNow(redis.client);
    const json = Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: i, kind: 'job' }));
    await redis.client.zadd(jobs, ...json.flatMap((m) => [Math.floor(now / 1000), m]));
    await redis.client.zadd(jobs, Math.floor(now / 1000) + 3600, 'in an hour');
    await redis.client.zadd(seta, now, 'a', now, 'b');

    // The dashboard reads what launchers publish (about once a second).
    type Row = { list: string; scoreUnit?: string; items: number; length: number | null };
    type Overview = { intake: (Row & { error: string | null })[] };
    const overview = await waitFor('the overview to show the moves', async () => {
      const body = (await (await fetch(new URL('/api/overview', url))).json()) as Overview;
      const [a, b, c] = body.intake;
      return a?.items === 30 && b?.items === 2 && c?.error ? body : undefined;
    });
    expect(overview.intake.map((r) => [r.list, r.scoreUnit, r.items, r.length])).toEqual([
      [jobs, 's', 30, 1],
      [seta, 'ms', 2, 0],
      [wrong, 'cs', 0, null],
    ]);
    expect(overview.intake[2]?.error).toMatch(/WRONGTYPE.*holds a string, not a zset/);

    const { samples } = await scrape(url);
    expect(sampleValue(samples, 'skyq_intake_items_total', { list: jobs })).toBe(30);
    expect(sampleValue(samples, 'skyq_intake_list_length', { list: jobs })).toBe(1);
    expect(sampleValue(samples, 'skyq_intake_items_total', { list: seta })).toBe(2);
    expect(sampleValue(samples, 'skyq_intake_list_length', { list: wrong })).toBeUndefined();

    const stats = await runCli(['stats', ...where]);
    expect(stats.code).toBe(0);
    const row = stats.stdout.split('\n').find((line) => line.startsWith(jobs));
    expect(row?.split(/\s+/).slice(0, 8)).toEqual([
      jobs,
      '(sorted',
      'set,',
      's)',
      String(hashString(jobs) % GROUPS),
      '0',
      '1',
      '30',
    ]);
    expect(stats.stdout).toMatch(new RegExp(`${wrong} \\(sorted set, cs\\).*WRONGTYPE`));
  });

  it('bad --zset-intake input is one clear line, and nothing starts', async () => {
    const where = ['--redis', redis.server.url, '--prefix', freshPrefix('zv')];
    const noUnit = await runCli(['start', ...where, '--zset-intake', 'JOB_MESSAGE_QUEUE']);
    expect(noUnit.code).toBe(1);
    expect(noUnit.stderr.split('\n')[0]).toBe(
      'skyq: zset-intake: expected KEY:UNIT (the unit s, cs or ms), e.g. JOB_MESSAGE_QUEUE:s,seta:ms (got "JOB_MESSAGE_QUEUE")',
    );
    const badUnit = await runCli(['start', ...where, '--zset-intake', 'seta:us']);
    expect(badUnit.code).toBe(1);
    expect(badUnit.stderr).toMatch(/zset-intake: expected KEY:UNIT/);
    const twice = await runCli(['start', ...where, '--intake', 'seta', '--zset-intake', 'seta:ms']);
    expect(twice.code).toBe(1);
    expect(twice.stderr.split('\n')[0]).toBe(
      'skyq: zsetIntake[0].key: is named twice (got "seta")',
    );
    const own = await runCli(['start', ...where, '--prefix', 'q', '--zset-intake', 'q:3:ms']);
    expect(own.code).toBe(1);
    expect(own.stderr).toMatch(/zsetIntake\[0\]\.key: is one of skyq's own groups/);
    const group = await runCli(['start', ...where, '--groups', '4', '--zset-intake', 'seta:ms=9']);
    expect(group.code).toBe(1);
    expect(group.stderr).toMatch(/zsetIntake\[0\]\.group/);
  });
});
