/**
 * What /metrics costs a busy launcher: the drain rate of a launcher kept full of work, measured
 * for a while without scraping and for as long with a scrape every second, alternating phases
 * (so a drift of the machine spreads over both), then both rates and their ratio. Target:
 * scraping costs under 1 % of the drain rate.
 *
 *   npm run build && node dist/bench/scrape-cost.js [--seconds 60] [--rounds 1] [--every 1000] [--cpu-only]
 *
 * Runs on a private redis-server on loopback; the launcher serves HTTP on 127.0.0.1 in both
 * phases (its dashboard reading runs in both), so the difference is the scraping alone.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from '../src/queue/queue.js';
import { startRedisServer } from '../src/redis/server.js';
import type { Launcher } from '../src/runtime/launcher.js';
import { startActors } from '../src/start.js';

const USAGE = `usage: node dist/bench/scrape-cost.js [options]
  --seconds N   length of each phase (default 60)
  --rounds N    phases without / with scraping, alternating (default 1 of each)
  --every MS    time between scrapes (default 1000)
  --groups N    actors (default 10)
  --cpu-only    only the CPU one scrape costs (idle launcher), no drain phases`;

/** Keep at least this many messages waiting, so the actors never run dry. */
const LOW_WATER = 40_000;
const CHUNK = 10_000;

interface Phase {
  scraping: boolean;
  done: number;
  ms: number;
  scrapes: number[];
  bytes: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const doneSoFar = async (launcher: Launcher) => (await launcher.stats()).totals.done;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' },
      rounds: { type: 'string', default: '1' },
      'cpu-only': { type: 'boolean', default: false },
      every: { type: 'string', default: '1000' },
      groups: { type: 'string', default: '10' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const number = (text: string, name: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`--${name} must be a whole number > 0\n${USAGE}`);
    return n;
  };
  const phaseMs = number(values.seconds, 'seconds') * 1000;
  const rounds = number(values.rounds, 'rounds');
  const everyMs = number(values.every, 'every');
  const groups = number(values.groups, 'groups');

  const server = await startRedisServer({});
  const logDir = mkdtempSync(join(tmpdir(), 'skyq-scrape-'));
  const queue = new Queue({ redis: server.url, groups });
  let launcher: Launcher | null = null;
  let feeding = true;
  try {
    launcher = await startActors({
      redis: server.url,
      groups,
      logDir,
      logLevel: 'warn',
      http: { listen: '127.0.0.1:0' },
    });
    const running = launcher;
    const url = new URL('/metrics', running.http?.url);
    // The direct figure first: what one scrape costs this process's CPU, measured while idle
    // (the drain figures below move by several % between equal phases on a busy 2-core box).
    const perScrapeMs = await cpuPerScrape(url);
    const share = perScrapeMs / everyMs / availableParallelism();
    console.log(
      `CPU per scrape, idle launcher: ${perScrapeMs.toFixed(2)} ms ` +
        `(${(share * 100).toFixed(2)} % of this machine's cores at one scrape per ${everyMs} ms)`,
    );
    if (values['cpu-only']) return;
    let added = 0;
    const feeder = (async () => {
      while (feeding) {
        if (added - (await doneSoFar(running)) < LOW_WATER) {
          await queue.addBulk(Array.from({ length: CHUNK }, (_, i) => ({ body: `m${added + i}` })));
          added += CHUNK;
        } else await sleep(20);
      }
    })();
    console.log(`warming up (5 s), then ${rounds * 2} phases of ${phaseMs / 1000} s…`);
    await sleep(5000);
    const phases: Phase[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which comes first, so neither always runs on a warmer machine.
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const scraping of order) {
        phases.push(await measure(running, url, scraping, phaseMs, everyMs));
        const last = phases.at(-1) as Phase;
        console.log(`  ${scraping ? 'with' : 'without'} scraping: ${rate(last).toFixed(0)} msg/s`);
      }
    }
    feeding = false;
    await feeder;
    report(phases, everyMs);
  } finally {
    feeding = false;
    await launcher?.stop(0);
    await queue.close();
    await server.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

async function measure(
  launcher: Launcher,
  url: URL,
  scraping: boolean,
  phaseMs: number,
  everyMs: number,
): Promise<Phase> {
  const phase: Phase = { scraping, done: 0, ms: 0, scrapes: [], bytes: 0 };
  const before = await doneSoFar(launcher);
  const started = performance.now();
  const end = started + phaseMs;
  if (scraping) {
    while (performance.now() < end) {
      const t = performance.now();
      const text = await (await fetch(url)).text();
      phase.scrapes.push(performance.now() - t);
      phase.bytes = text.length;
      await sleep(Math.max(0, everyMs - (performance.now() - t)));
    }
  } else {
    await sleep(phaseMs);
  }
  phase.ms = performance.now() - started;
  phase.done = (await doneSoFar(launcher)) - before;
  return phase;
}

const rate = (p: Phase) => (p.done * 1000) / p.ms;

/**
 * CPU ms of this whole process per scrape, above its idle rate: 25 s for start-up work to
 * settle (V8's memory reducer runs full GCs in every thread for ~20 s), 5 s idle, 100 scrapes.
 */
async function cpuPerScrape(url: URL): Promise<number> {
  await sleep(25_000);
  const idleFrom = process.cpuUsage();
  const idleStart = performance.now();
  await sleep(5000);
  const idleRate = cpuMs(process.cpuUsage(idleFrom)) / (performance.now() - idleStart);
  const from = process.cpuUsage();
  const start = performance.now();
  const count = 100;
  for (let i = 0; i < count; i++) {
    await (await fetch(url)).text();
    await sleep(50);
  }
  const spent = cpuMs(process.cpuUsage(from)) - idleRate * (performance.now() - start);
  return spent / count;
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

function report(phases: Phase[], everyMs: number): void {
  const total = (scraping: boolean) => {
    const chosen = phases.filter((p) => p.scraping === scraping);
    const done = chosen.reduce((sum, p) => sum + p.done, 0);
    const ms = chosen.reduce((sum, p) => sum + p.ms, 0);
    return { rate: (done * 1000) / ms, scrapes: chosen.flatMap((p) => p.scrapes) };
  };
  const without = total(false);
  const withScrapes = total(true);
  const times = [...withScrapes.scrapes].sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  const bytes = phases.find((p) => p.scraping)?.bytes ?? 0;
  const ratio = withScrapes.rate / without.rate;
  console.log('');
  console.log(`drain rate without scraping:        ${without.rate.toFixed(0)} msg/s`);
  console.log(
    `drain rate scraping every ${everyMs} ms: ${withScrapes.rate.toFixed(0)} msg/s ` +
      `(${times.length} scrapes, median ${median.toFixed(1)} ms, max ${(times.at(-1) ?? 0).toFixed(1)} ms, ${(bytes / 1024).toFixed(1)} KiB each)`,
  );
  console.log(
    `ratio with/without: ${ratio.toFixed(4)} (cost ${((1 - ratio) * 100).toFixed(2)} %; target under 1 %)`,
  );
}

await main();
