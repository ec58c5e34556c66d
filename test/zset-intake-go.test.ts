/**
 * Issue 28 §3: the first design's own producer against a real launcher. Its Go program (a loop
 * of `ZADD JOB_MESSAGE_QUEUE <unix seconds + rand(0..4)> <json>` with redigo, the client the
 * design uses; test/fixtures/zset-producer) adds 20,000 members while `skyq start --zset-intake
 * JOB_MESSAGE_QUEUE:s` runs: each is handled once, none before its second, each due at its
 * score. The toolchain is Debian's golang-go and golang-github-garyburd-redigo-dev (.ci/run
 * installs them); without them this test fails and says so, it does not skip.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { readStarts } from './helpers/intake.js';
import {
  type CliChild,
  fixture,
  spawnCli,
  tempDir,
  untilStartReady,
  useRuntimeRedis,
  waitFor,
} from './helpers/runtime.js';

const redis = useRuntimeRedis();
const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';
const REDIGO = join(GOPATH, 'src/github.com/garyburd/redigo/redis');
const MEMBERS = 20_000;
const MISSING =
  'the Go producer needs Debian packages golang-go and golang-github-garyburd-redigo-dev ' +
  '(apt-get install golang-go golang-github-garyburd-redigo-dev; .ci/run installs them)';

/** Builds the producer with Debian's Go and redigo (GOPATH mode); a clear error without them. */
async function buildProducer(): Promise<string> {
  const go = await run('go', ['version']).catch(() => null);
  if (!go) throw new Error(`no \`go\` on PATH: ${MISSING}`);
  if (!existsSync(REDIGO)) throw new Error(`no redigo in ${REDIGO}: ${MISSING}`);
  const out = join(tempDir('skyq-go-'), 'zset-producer');
  const env = { ...process.env, GOPATH, GO111MODULE: 'off', GOFLAGS: '' };
  await run('go', ['build', '-o', out, fixture('zset-producer/main.go')], { env });
  return out;
}

describe("the first design's Go producer", () => {
  let launcher: CliChild | null = null;
  afterAll(async () => {
    launcher?.child.kill('SIGTERM');
    await launcher?.done;
  });

  it('20,000 members ZADDed by redigo: each handled once, none before its second', async () => {
    const producer = await buildProducer();
    const key = 'JOB_MESSAGE_QUEUE';
    launcher = spawnCli([
      'start',
      '--redis',
      redis.server.url,
      '--prefix',
      'goseed',
      '--groups',
      '4',
      '--zset-intake',
      `${key}:s`,
      '--handler',
      fixture('starts.mjs'),
      '--log-dir',
      tempDir(),
    ]);
    await untilStartReady(launcher);
    const added = await run(producer, [`127.0.0.1:${redis.server.port}`, key, String(MEMBERS)]);
    expect(added.stdout.trim()).toBe(`added ${MEMBERS}`);
    // Due times reach 4 s past the last ZADD's second: wait for them, and the drain.
    await waitFor(
      `${MEMBERS} starts`,
      async () => ((await redis.client.llen('starts')) >= MEMBERS ? true : undefined),
      30_000,
      250,
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would show by now
    const starts = await readStarts(redis.client);
    const ids = starts.map((s) => (JSON.parse(s.body as string) as { id: number }).id);
    expect(starts.length).toBe(MEMBERS);
    expect(new Set(ids).size).toBe(MEMBERS);
    let early = 0;
    for (const s of starts) {
      expect(s.dueAt % 1000).toBe(0); // a whole second: the member's score, in ms
      // Moved when due on Redis's clock; the handler reads the same system clock another way.
      if (s.startedAt < s.dueAt - 2) early++;
    }
    // Per due second: members, and the latest start. Members due in the seconds the producer
    // was still adding were late before they were added; later seconds fall due ~4,000 at once.
    const bySecond = new Map<number, { count: number; late: number }>();
    for (const s of starts) {
      const second = bySecond.get(s.dueAt) ?? { count: 0, late: 0 };
      second.count++;
      second.late = Math.max(second.late, s.startedAt - s.dueAt);
      bySecond.set(s.dueAt, second);
    }
    const seconds = [...bySecond.values()].map((v) => `${v.count} by +${v.late.toFixed(0)} ms`);
    console.log(`go producer: ${MEMBERS} members, 0 twice, ${early} early; ${seconds.join(', ')}`);
    expect(early).toBe(0);
    expect(await redis.client.exists(key)).toBe(0);
  }, 90_000);
});
