/**
 * How late members added by other programs (a plain ZADD, no skyq producer, no wake-up token)
 * start on idle actors: the figure behind issue 7's first item. Ten actors with startActors'
 * defaults on a fresh redis-server sit idle; every `--every` ms one raw member (with a space in
 * it) goes into the next group, due `--ahead` ms later, or already overdue (`--ahead 0`). Run
 * once with the watcher alone (keyspace notifications off) and once with notifications on.
 *
 *   npm run build && node dist/bench/foreign-latency.js [--count 200] [--every 100] [--ahead 300]
 *     [--actor-nice 10]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { keyOf } from '../src/base/keys.js';
import { startRedisServer } from '../src/redis/server.js';
import type { KeyspaceMode } from '../src/runtime/keyspace.js';
import { startActors } from '../src/start.js';
import { listenForStarts } from './handler-starts.js';
import { LatenessRecorder } from './measures.js';
import { BENCH_HANDLER, tempLogDir } from './start-cost.js';

const GROUPS = 10;
const PREFIX = 'task_group';

export interface ForeignRun {
  mode: KeyspaceMode;
  count: number;
  everyMs: number;
  aheadMs: number;
  /** startActors' actorNice (undefined: its default) */
  actorNice?: number;
}

export async function measureForeign(run: ForeignRun) {
  const server = await startRedisServer();
  const plain = new Redis(server.url);
  const logs = tempLogDir();
  const lateness = new LatenessRecorder();
  const added = new Map<string, number>();
  let started = 0;
  const listening = listenForStarts(GROUPS, (id, dueAt, start) => {
    if (!added.has(id)) return;
    // Overdue members: from the ZADD, since their due time passed long before.
    lateness.record(start - Math.max(dueAt, added.get(id) as number));
    started++;
  });
  const launcher = await startActors({
    redis: server.url,
    handler: BENCH_HANDLER,
    logDir: logs.dir,
    keyspaceEvents: run.mode,
    publishStats: false,
    ...(run.actorNice === undefined ? {} : { actorNice: run.actorNice }),
  });
  try {
    await sleep(1000); // every actor settles into its idle wait
    for (let i = 0; i < run.count; i++) {
      const member = `raw ${i} from another program`;
      const now = Date.now();
      const due = run.aheadMs > 0 ? now + run.aheadMs : now - 60_000;
      added.set(member, now);
      await plain.zadd(keyOf(PREFIX, i % GROUPS, 'delayed'), due, member);
      await sleep(run.everyMs);
    }
    const deadline = Date.now() + 10_000;
    while (started < run.count && Date.now() < deadline) await sleep(50);
    return {
      ...run,
      started,
      lost: run.count - started,
      ...lateness.summary(),
      early: lateness.early,
    };
  } finally {
    listening.close();
    await launcher.stop(1000);
    plain.disconnect();
    await server.stop();
    logs.remove();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '200' },
      every: { type: 'string', default: '100' },
      ahead: { type: 'string', default: '300' },
      json: { type: 'boolean', default: false },
      'actor-nice': { type: 'string' },
    },
  });
  const nice = values['actor-nice'];
  const base = {
    count: Number(values.count),
    everyMs: Number(values.every),
    aheadMs: Number(values.ahead),
    ...(nice === undefined ? {} : { actorNice: Number(nice) }),
  };
  const results = [];
  for (const mode of ['off', 'enable'] as const)
    results.push(await measureForeign({ ...base, mode }));
  if (values.json) {
    console.log(JSON.stringify(results, null, 2));
    return;
  }
  const what =
    base.aheadMs > 0
      ? `due ${base.aheadMs} ms after the ZADD`
      : 'overdue when added (from the ZADD)';
  console.log(`${base.count} raw members, one every ${base.everyMs} ms, ${what}; 10 idle actors`);
  console.log('keyspace   started  lost  early  p50 ms  p99 ms  max ms');
  for (const r of results) {
    const cells = [r.mode.padEnd(9), String(r.started).padStart(8), String(r.lost).padStart(5)];
    cells.push(String(r.early.count).padStart(6));
    for (const v of [r.p50, r.p99, r.max]) cells.push(v.toFixed(1).padStart(7));
    console.log(cells.join(' '));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
