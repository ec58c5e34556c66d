/**
 * The sections of bench/targets.ts, one per group of issue 9's targets. Each runs on fresh
 * private redis-servers with startActors' defaults and the no-op handler (skyq-handler.ts), and
 * returns its rows plus the raw results behind them.
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { measureIdleLauncher } from './idle-launcher.js';
import { actorLatenessP99 } from './launcher-figures.js';
import { cpuSince } from './measures.js';
import { IDLE_AFTER_READY_MS } from './start-cost.js';
import { foreignSection } from './target-foreign.js';
import {
  ACTORS,
  atLeast,
  atMost,
  guaranteeRows,
  perMessageUs,
  row,
  type Section,
  skyqRun,
  waitForHandled,
  withActors,
  withServer,
  workload,
} from './target-kit.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

const start: Section = (sizes) =>
  withActors(sizes, async (_url, cost) => {
    const cpu = process.cpuUsage();
    await sleep(IDLE_AFTER_READY_MS);
    const settling = cpuSince(cpu);
    const s = 'start';
    return {
      rows: [
        row(s, `${ACTORS} actors ready (wall)`, cost.seconds, 's', atMost(1)),
        row(s, 'CPU to ready, all threads', cost.cpuSeconds, 'CPU-s', atMost(1.5)),
        row(s, 'CPU in the second after ready', settling, 'CPU-s'),
      ],
      results: { start: cost, cpuSecondAfterReady: settling },
    };
  });

// The launcher runs in a process of its own (idle-launcher.ts): this one holds what the
// sections before left behind, which no idle launcher pays for.
const idle: Section = (sizes) =>
  withServer(async (url) => {
    const { first, settled } = await measureIdleLauncher(
      url,
      sizes.idleSeconds,
      sizes.idleSettleSeconds,
      sizes.actorNice,
    );
    const s = 'idle';
    const from = IDLE_AFTER_READY_MS / 1000;
    const after = `${from}–${from + sizes.idleSeconds} s after ready`;
    const settledFrom = from + sizes.idleSeconds + sizes.idleSettleSeconds;
    const settledAt = `${settledFrom}–${settledFrom + sizes.idleSeconds} s after ready`;
    return {
      rows: [
        row(s, `launcher cores, ${after}`, first.cores, 'cores', atMost(0.02)),
        row(s, `launcher cores, settled (${settledAt})`, settled.cores, 'cores', atMost(0.01)),
        row(s, 'Redis commands per second, settled', settled.redisCallsPerSecond, '/s'),
        row(s, 'Redis cores, settled', settled.redisCores, 'cores'),
      ],
      results: { idle: first, settled },
    };
  });

const steady: Section = async (sizes) => {
  const r = await skyqRun(
    workload('steady', { rate: sizes.steadyRate, durationMs: sizes.steadySeconds * 1000 }),
    sizes,
  );
  const s = 'steady';
  const cores = r.nodeCpuSeconds / r.totalSeconds;
  return {
    rows: [
      row(s, `launcher cores at ${sizes.steadyRate}/s`, cores, 'cores', atMost(0.15)),
      row(s, 'Node CPU per message', perMessageUs(r.nodeCpuSeconds, r), 'µs', atMost(75)),
      row(s, 'lateness p50', r.lateness.p50, 'ms', atMost(1)),
      row(s, 'lateness p99', r.lateness.p99, 'ms', atMost(5)),
      row(s, 'lateness p99 by the actors (stats)', r.actorLatenessP99 ?? NaN, 'ms'),
      ...guaranteeRows(s, r),
    ],
    results: { steady: r },
  };
};

/**
 * The seed as its producer runs it: each message due `start + rand(0..spread)`, added in the order
 * made (random due order), producer and actors in one process (issue 18's targets); then the same
 * messages sorted by due time, as a timer source would hand them over, for comparison.
 */
const seed: Section = async (sizes) => {
  const base = { count: sizes.seedCount, spreadMs: sizes.seedSpreadMs };
  const r = await skyqRun(workload('seed', { ...base, order: 'made' }), sizes);
  const sorted = await skyqRun(workload('seed', { ...base, order: 'due' }), sizes);
  const s = 'seed';
  const t = 'seed, sorted';
  return {
    rows: [
      row(s, 'producer adds/s while consuming', r.enqueueRate, '/s', atLeast(75_000)),
      row(s, 'lateness from due p50', r.lateness.p50, 'ms'),
      row(s, 'lateness from due p99', r.lateness.p99, 'ms', atMost(1_000)),
      row(s, 'lateness from max(due, added) p99', r.latenessSinceAdded.p99, 'ms', atMost(20)),
      row(
        s,
        'first add → last handled',
        r.totalSeconds,
        's',
        atMost(sizes.seedSpreadMs / 1000 + 0.3),
      ),
      ...guaranteeRows(s, r),
      row(s, 'Node CPU per message', perMessageUs(r.nodeCpuSeconds, r), 'µs', atMost(45)),
      row(s, 'Redis CPU per message', perMessageUs(r.redisCpuSeconds, r), 'µs', atMost(15)),
      row(s, 'script calls per message', r.scriptCallsPerMessage, ''),
      row(t, 'producer adds/s while consuming', sorted.enqueueRate, '/s'),
      row(t, 'lateness p99', sorted.lateness.p99, 'ms'),
      row(t, 'Node CPU per message', perMessageUs(sorted.nodeCpuSeconds, sorted), 'µs'),
      ...guaranteeRows(t, sorted),
    ],
    results: { seed: r, sorted },
  };
};

const burst: Section = async (sizes) => {
  const w = () => workload('burst', { count: sizes.burstCount });
  const cold = await skyqRun(w(), sizes, { coldStart: true });
  const warm = await skyqRun(w(), sizes);
  const s = 'burst';
  const n = sizes.burstCount.toLocaleString('en-US');
  return {
    rows: [
      row(s, `startActors on ${n} due → all handled`, cold.drainSeconds, 's'),
      row(
        s,
        'from cold, start-up included',
        cold.handled / cold.drainSeconds,
        '/s',
        atLeast(50_000),
      ),
      row(s, 'of which startActors resolving', cold.startup?.seconds ?? NaN, 's'),
      ...guaranteeRows(s, cold, ' (cold)'),
      row(s, 'drain, actors already running', warm.drainRate, '/s', atLeast(60_000)),
      row(
        s,
        'script calls per message (adds included)',
        warm.scriptCallsPerMessage,
        '',
        atMost(0.02),
      ),
      ...guaranteeRows(s, warm, ' (running)'),
    ],
    results: { cold, warm },
  };
};

const addbulk: Section = async (sizes) => {
  // The memory workload adds far-future messages and consumes nothing: addBulk alone.
  const r = await skyqRun(workload('memory', { count: sizes.addbulkCount }), sizes);
  return {
    rows: [row('addbulk', 'addBulk alone, calls of 1,000', r.enqueueRate, '/s', atLeast(150_000))],
    results: { addbulk: r },
  };
};

const pool: Section = async (sizes) => {
  const r = await skyqRun(workload('burst', { count: sizes.poolCount }), sizes, { pool: 2 });
  const s = 'pool';
  return {
    rows: [
      row(s, 'drain with pool: 2, no-op handler', r.drainRate, '/s', atLeast(20_000)),
      row(s, 'lost', r.lost, '', atMost(0)),
    ],
    results: { pool: r },
  };
};

const memory: Section = async (sizes) => {
  const r = await skyqRun(workload('memory', { count: sizes.memoryCount, bodyBytes: 100 }), sizes);
  return {
    rows: [
      row(
        'memory',
        'per pending message, 100-byte body',
        r.bytesPerMessage ?? NaN,
        'B',
        atMost(280),
      ),
    ],
    results: { memory: r },
  };
};

const growth: Section = async (sizes) => {
  const drain = (backlog: number) =>
    skyqRun(workload('burst', { count: sizes.growthDrain, backlog }), sizes);
  const large = await drain(sizes.growthPending);
  const small = await drain(sizes.growthBase);
  const s = 'growth';
  const n = (v: number) => v.toLocaleString('en-US');
  return {
    rows: [
      row(s, `drain with ${n(sizes.growthPending)} pending`, large.drainRate, '/s'),
      row(s, `drain with ${n(sizes.growthBase)} pending`, small.drainRate, '/s'),
      row(s, 'ratio', large.drainRate / small.drainRate, '×', atLeast(0.8)),
    ],
    results: { large, small },
  };
};

/**
 * `skyq produce --count 20000 --spread 2s` (the CLI, its own process) into running actors: the
 * actors' own lateness p99 from due, as `skyq stats` shows it.
 */
const cli: Section = (sizes) =>
  withActors(sizes, async (url, _cost, launcher) => {
    const count = Math.min(20_000, sizes.seedCount);
    // Not spawnSync: the launcher's own timers (stats, pings) run on this thread meanwhile.
    const produce = await promisify(execFile)(
      process.execPath,
      [CLI, 'produce', '--redis', url, '--count', String(count), '--spread', '2s'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const handled = await waitForHandled(launcher, count, 30_000);
    const p99 = await actorLatenessP99(launcher);
    const s = 'cli';
    return {
      rows: [
        row(s, `produce --count ${count} --spread 2s: lateness p99`, p99, 'ms', atMost(50)),
        row(s, 'handled', handled, '', atLeast(count)),
      ],
      results: { cli: { count, handled, latenessP99: p99, producer: produce.stdout.trim() } },
    };
  });

/** In the order they run. */
export const SECTIONS = {
  start,
  idle,
  steady,
  seed,
  cli,
  foreign: foreignSection as Section,
  burst,
  addbulk,
  pool,
  memory,
  growth,
};
export type SectionName = keyof typeof SECTIONS;
