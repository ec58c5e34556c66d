/**
 * What a newcomer sees of schedules (issue 24, items 1.4 and 1.5), through the built CLI, the
 * library and the dashboard's API. Before: the body was shown nowhere, intervals printed as
 * `every 5000 ms`, times only in UTC, `--cron "0 0 31 2 *"` (never runs) was taken silently,
 * `skyq get` said each occurrence was `added by another client` (and printed its name twice),
 * `schedules upsert --json` meant "the body is JSON", and nothing told the next run times.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { httpLauncher } from './helpers/http.js';
import { finish, runCli, spawnCli, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const where = (prefix: string) => [
  '--redis',
  redis.server.url,
  '--prefix',
  prefix,
  '--groups',
  '2',
];
/** "<zone> (in 1 h 12 min)": a time on a named zone's clock, and how far off (or ago). */
const IN_ZONE = (zone: string) =>
  new RegExp(`20\\d\\d-\\d\\d-\\d\\d \\d\\d:\\d\\d(:\\d\\d)? ${zone} \\((in \\d|now|\\d.* ago)`);

describe('skyq schedules, as a newcomer reads it', () => {
  it('upsert --body-json --json prints JSON with the body; list shows durations, zones and bodies', async () => {
    const flags = where('newcli');
    const made = await runCli([
      'schedules',
      'upsert',
      'tick',
      ...flags,
      '--every',
      '5s',
      '--body-json',
      '{"kind":"tick"}',
      '--json',
    ]);
    expect(made.stderr).toBe('');
    expect(JSON.parse(made.stdout)).toMatchObject({
      id: 'tick',
      every: 5000,
      body: { kind: 'tick' },
    });
    const nightly = await runCli(
      [
        'schedules',
        'upsert',
        'nightly',
        ...flags,
        '--cron',
        '0 3 * * *',
        '--tz',
        'Europe/Berlin',
      ].concat(['--body', 'monthly figures', '--name', 'report.build']),
    );
    expect(nightly.stdout).toMatch(IN_ZONE('Europe/Berlin'));
    const listed = await finish(spawnCli(['schedules', 'list', ...flags], { TZ: 'Asia/Tokyo' }));
    const tickRow = listed.stdout.split('\n').find((line) => line.startsWith('tick'));
    expect(tickRow).toContain('every 5 s');
    expect(tickRow).toMatch(IN_ZONE('Asia/Tokyo')); // an `every` schedule: this machine's zone
    expect(tickRow).toMatch(/\{"kind":"tick"\}$/);
    const nightlyRow = listed.stdout.split('\n').find((line) => line.startsWith('nightly'));
    expect(nightlyRow).toMatch(IN_ZONE('Europe/Berlin'));
    expect(nightlyRow).toMatch(/monthly figures$/);
    const json = JSON.parse((await runCli(['schedules', 'list', ...flags, '--json'])).stdout);
    expect(json.map((s: { body: unknown }) => s.body)).toEqual([
      'monthly figures',
      { kind: 'tick' },
    ]);
  });

  it('refuses a cron that never runs, and --json with --body (its old meaning), in one line', async () => {
    const flags = where('refusecli');
    const never = await runCli(['schedules', 'upsert', 'x', ...flags, '--cron', '0 0 31 2 *']);
    expect(never.code).toBe(1);
    expect(never.stderr.split('\n')[0]).toBe(
      'skyq: cron: never runs: no date matches it (got "0 0 31 2 *")',
    );
    const old = await runCli([
      'schedules',
      'upsert',
      'x',
      ...flags,
      '--every',
      '1s',
      '--body',
      '{"a":1}',
      '--json',
    ]);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/^skyq: json: now prints the schedule as JSON.*--body-json/);
    const queue = new Queue({ redis: redis.server.url, prefix: 'refusecli', groups: 2 });
    try {
      await expect(queue.schedules.upsert('x', { cron: '0 0 30 2 *' })).rejects.toThrow(
        'cron: never runs',
      );
      expect(await queue.schedules.list()).toEqual([]);
    } finally {
      await queue.close();
    }
  });

  it('preview: by id and by spec, in the zone, as JSON; the library agrees', async () => {
    const flags = where('previewcli');
    await runCli(
      ['schedules', 'upsert', 'half', ...flags, '--cron', '0,30 2 * * *', '--tz'].concat(
        'Europe/Berlin',
      ),
    );
    const spec = [
      '--cron',
      '0,30 2 * * *',
      '--tz',
      'Europe/Berlin',
      '--from',
      '2027-03-27T00:00:00Z',
    ];
    const byFlags = await runCli(['schedules', 'preview', ...flags, ...spec, '--count', '4']);
    expect(byFlags.stderr).toBe('');
    expect(
      byFlags.stdout
        .trim()
        .split('\n')
        .map((line) => line.replace(/ \(in .*\)$/, '')),
    ).toEqual([
      `reading ${redis.server.url}`, // it reads Redis's clock (docs/cli.md: every command says)
      '2027-03-27 02:00 Europe/Berlin',
      '2027-03-27 02:30 Europe/Berlin',
      '2027-03-28 03:00 Europe/Berlin', // the skipped 02:00 and 02:30, once
      '2027-03-29 02:00 Europe/Berlin',
    ]);
    const byId = await runCli(['schedules', 'preview', 'half', ...flags, '--count', '2']);
    const [readFrom, ...runs] = byId.stdout.trim().split('\n');
    expect(readFrom).toBe(`reading ${redis.server.url}`);
    expect(runs).toHaveLength(2);
    for (const line of runs) expect(line).toMatch(IN_ZONE('Europe/Berlin'));
    const asJson = await runCli([
      'schedules',
      'preview',
      'half',
      ...flags,
      '--count',
      '2',
      '--json',
    ]);
    const queue = new Queue({ redis: redis.server.url, prefix: 'previewcli', groups: 2 });
    try {
      expect(JSON.parse(asJson.stdout)).toEqual(
        await queue.schedules.preview('half', { count: 2 }),
      );
      expect(JSON.parse(asJson.stdout)[0]).toBe((await queue.schedules.get('half'))?.next);
    } finally {
      await queue.close();
    }
    // A day the month lacks is refused, not rolled over (2027-02-31 was read as 2027-03-03).
    const noDay = ['schedules', 'preview', ...flags, '--every', '1d', '--from', '2027-02-31'];
    const rolled = await runCli(noDay);
    expect(rolled.code).toBe(1);
    expect(rolled.stderr.split('\n')[0]).toBe(
      'skyq: from: 2027-02 has no day 31 (got "2027-02-31")',
    );
    expect(rolled.stdout).toBe('');
    const leap = await runCli([...noDay.slice(0, -1), '2028-02-29T12:00Z', '--count', '1']);
    expect(leap.stdout).toMatch(/^2028-02-29 /m);
    const neither = await runCli(['schedules', 'preview', ...flags]);
    expect(neither.stderr.split('\n')[0]).toBe(
      'skyq: id: give a schedule id, or a spec (--every or --cron)',
    );
  });

  it('skyq get of an occurrence: added by its schedule, its name once', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'getcli', groups: 2 });
    try {
      const made = await queue.schedules.upsert('beat', { every: '1h', name: 'beat.run' });
      const got = await runCli(['get', `schedule:beat:${made.next}`, ...where('getcli')]);
      expect(got.stdout).toMatch(/^enqueued +- \(added by schedule beat\)$/m);
      expect(got.stdout.match(/^name /gm)).toHaveLength(1);
    } finally {
      await queue.close();
    }
  });

  it('the dashboard API: next runs, Redis now and a body preview', async () => {
    const { launcher, url } = await httpLauncher(redis.server.url, { prefix: 'apisched' });
    const queue = new Queue({ redis: redis.server.url, prefix: 'apisched', groups: 2 });
    try {
      await queue.schedules.upsert('nightly', {
        cron: '0 3 * * *',
        tz: 'Europe/Berlin',
        body: 'x'.repeat(500),
      });
      const reply = (await (await fetch(new URL('/api/schedules', url))).json()) as {
        now: number;
        schedules: { id: string; upcoming: number[]; body: { text: string; truncated: boolean } }[];
      };
      const [row] = reply.schedules;
      expect(row?.upcoming).toEqual(await queue.schedules.preview('nightly', { count: 3 }));
      expect(row?.body).toMatchObject({ truncated: true, length: 500 });
      expect(Math.abs(reply.now - Date.now())).toBeLessThan(60_000);
    } finally {
      await queue.close();
      await launcher.stop();
    }
  });
});
