/**
 * Every long-lived client recovers by itself within 2 s of Redis answering again, whatever the
 * outage: every connection dropped (CLIENT KILL), a 6 s restart, a 2-minute restart (kill -9
 * of redis-server, restarted on its append-only file). The clients run through all three:
 * - `skyq start` with its actors, an intake list, a per-name rate limit and its HTTP server
 *   (the dashboard's job view reads Redis on each request);
 * - `skyq stats --watch --json`, `skyq events --follow --json`, `skyq logs --follow`;
 * - in this process, one Queue's waitFor reader and its events() iterator.
 * After each outage one job is added, one item listed and one long-delayed job made due; each
 * client must show it within 2 s (logs --follow, which reads files, within 2 s of the job's end).
 * Every client follows before the first outage. Before: `stats --watch` printed `cannot read the figures:
 * Connection is closed.` for good after a 6 s restart and `events --follow` missed every later
 * event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import type { QueueEvent } from '../../src/queue/events/event.js';
import { heldPort, type RedisServerHandle, startStandalone } from '../helpers/redis.js';
import { type CliChild, removeTempDirs, spawnCli, tempDir } from '../helpers/runtime.js';
import { startSkyq } from './helpers/processes.js';
import { saveCost } from './helpers/results.js';
import { hexOf, readFinishes, TALLY } from './helpers/tally.js';

const PREFIX = 'lived';
const GROUPS = 2;
const BACK_WITHIN_MS = 2000;

let port: number;
let dir: string;
let server: RedisServerHandle;
let recorder: RedisServerHandle;
let record: Redis;
const children: CliChild[] = [];

const durable = () =>
  startStandalone({ port, dir, appendonly: true, extraArgs: ['--appendfsync', 'always'] });
const flags = () => ['--redis', server.url, '--prefix', PREFIX, '--groups', String(GROUPS)];

beforeAll(async () => {
  port = await heldPort();
  dir = tempDir('skyq-lived-');
  [server, recorder] = await Promise.all([durable(), startStandalone()]);
  record = new Redis(recorder.url);
});

afterAll(async () => {
  for (const child of children) child.child.kill('SIGKILL');
  record?.disconnect();
  await Promise.all([server?.stop(), recorder?.stop()]);
  removeTempDirs();
});

/** Polls `probe` until it is true; resolves the time it first was (ms since the epoch). */
async function when(what: string, probe: () => boolean | Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (
      await Promise.resolve()
        .then(probe)
        .catch(() => false)
    )
      return Date.now();
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

type Outage = { name: string; cause: () => Promise<void> };

const OUTAGES: Outage[] = [
  {
    name: 'every connection dropped (CLIENT KILL)',
    cause: async () => {
      const admin = new Redis(server.url);
      await admin.client('KILL', 'TYPE', 'normal');
      await admin.client('KILL', 'TYPE', 'pubsub');
      admin.disconnect();
    },
  },
  { name: 'a 6 s restart', cause: () => restartAfter(6000) },
  { name: 'a 2-minute restart', cause: () => restartAfter(120_000) },
];

async function restartAfter(ms: number): Promise<void> {
  process.kill(server.pid, 'SIGKILL');
  await sleep(ms);
  server = await durable();
}

describe('long-lived clients through Redis outages', () => {
  it('each is back within 2 s of Redis answering again', async () => {
    const env = { SKYQ_TALLY_REDIS: recorder.url };
    const httpPort = await heldPort();
    const launcher = await startSkyq(
      [
        ...flags(),
        '--handler',
        TALLY,
        '--log-dir',
        dir,
        '--log-level',
        'debug',
        '--intake',
        'inbox',
        '--rate-limit',
        'limited=200/s',
        '--http',
        `127.0.0.1:${httpPort}`,
      ],
      env,
    );
    children.push(launcher);
    const stats = spawnCli(['stats', ...flags(), '--watch', '200ms', '--json']);
    const events = spawnCli(['events', ...flags(), '--follow', '--json'], { DEBUG: 'ioredis:*' });
    const logs = spawnCli(['logs', '--follow', '--level', 'debug', '--log-dir', dir]);
    children.push(stats, events, logs);
    const queue = new Queue({ redis: server.url, prefix: PREFIX, groups: GROUPS });
    const seen: QueueEvent[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const event of queue.events({ follow: true, signal: stop.signal }))
        seen.push(event);
    })();
    const figures: string[] = [];
    try {
      await queue.ready();
      // Every client follows before the first outage: a command still starting when it came
      // would follow from after it, and rightly not show what happened before.
      await when('stats --watch frame', () => stats.stdout().includes('"groups"'));
      await when('logs --follow line', () => logs.stdout().includes('launcher started'));
      await when('events --follow following', async () => {
        await queue.cancel(await queue.add('warm-up', { delay: 3_600_000 }));
        await sleep(200);
        return events.stdout().includes('"type":"cancelled"');
      });
      for (const [round, outage] of OUTAGES.entries()) {
        // Waited for through the outage: made due only once Redis is back.
        const later = await queue.add({ round }, { id: `later-${round}`, delay: 3_600_000 });
        const waiting = queue.waitFor(later, { timeoutMs: 600_000 });
        await sleep(500); // the reader is blocked in XREAD before the outage
        await outage.cause();
        const upAt = await when('Redis answers', async () => {
          const probe = new Redis(server.url, { retryStrategy: () => null, lazyConnect: true });
          probe.on('error', () => undefined);
          try {
            await probe.connect();
            return (await probe.ping()) === 'PONG';
          } finally {
            probe.disconnect();
          }
        });
        const producer = new Queue({ redis: server.url, prefix: PREFIX, groups: GROUPS });
        const id = await producer.add({ round }, { id: `now-${round}`, name: 'limited' });
        await producer.reschedule(later, { delay: 0 });
        await producer.client.lpush('inbox', `listed-${round}`);
        await producer.close();
        const done = (hex: string) => async () =>
          (await readFinishes(record)).some((f) => f.h === hex);
        const back = {
          'actors (rate-limited name)': when('the job done', done(hexOf(id))),
          intake: when('the listed item done', async () =>
            (await readFinishes(record)).some(
              (f) => Buffer.from(f.b ?? '', 'hex').toString() === `listed-${round}`,
            ),
          ),
          waitFor: waiting.then(() => Date.now()),
          'events()': when('events() sees it', () =>
            seen.some((e) => e.id === id && e.type === 'done'),
          ),
          'stats --watch': when('a fresh frame', () =>
            stats
              .stdout()
              .trim()
              .split('\n')
              .some((line) => line.startsWith('{') && JSON.parse(line).at > upAt),
          ),
          'events --follow': when('events --follow line', () =>
            events.stdout().includes(`"id":"${id}"`),
          ),
          'logs --follow': when('logs --follow line', () => logs.stdout().includes(id)),
          'dashboard job view': when('the job read', async () => {
            const reply = await fetch(`http://127.0.0.1:${httpPort}/api/jobs/${id}`);
            return reply.ok && (await reply.json()).state === 'done';
          }),
        };
        for (const [client, at] of Object.entries(back)) {
          // logs --follow reads files, not Redis: it is timed from the job's end, which its
          // line tells (it prints a line HOLD_MS after it was written, to keep writers in order).
          const files = client === 'logs --follow';
          const since = files ? await back['actors (rate-limited name)'] : upAt;
          const ms =
            (await at.catch((error: Error) => {
              for (const child of [stats, events, logs])
                console.log(child.stdout().slice(-1500), child.stderr());
              throw error;
            })) - since;
          const after = files ? 'the job was done' : 'Redis answered';
          figures.push(`${outage.name}: ${client} back ${ms} ms after ${after}`);
          expect(ms, `${outage.name}: ${client}`).toBeLessThan(BACK_WITHIN_MS);
        }
        expect(await waiting).toMatchObject({ state: 'done' });
        await record.del('done');
      }
    } finally {
      console.log(figures.join('\n'));
      stop.abort();
      await reading.catch(() => undefined);
      await queue.close();
    }
    for (const child of [stats, events, logs])
      expect(child.child.exitCode, child.stderr()).toBe(null);
    saveCost({
      key: '03b-long-lived-clients',
      fault:
        'every connection dropped, a 6 s restart and a 2-minute restart (kill -9, AOF) under a launcher (intake, rate limit, HTTP), stats --watch, events --follow, logs --follow, waitFor and events()',
      messages: OUTAGES.length * 3,
      inFlight: 0,
      recoveryMs: Math.max(...figures.map((f) => Number(/back (\d+) ms/.exec(f)?.[1]))),
      allBackMs: null,
      duplicates: 0,
      lost: 0,
      notes: figures.join('; '),
    });
  });
});
