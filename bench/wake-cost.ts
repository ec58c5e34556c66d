/**
 * What one wake-up of a sleeping thread costs this machine, before any skyq code runs: an empty
 * setInterval callback every N ms, with the thread's own run time read from the kernel
 * (/proc/thread-self/schedstat, exact to the ns, where process.cpuUsage counts by the tick).
 * An idle launcher and the steady workload are mostly such wake-ups (a timer per start, a
 * watcher check every 50 ms), so their CPU follows this figure more than skyq's own work.
 *   node dist/bench/wake-cost.js [--seconds 3] [--every 1,5,50]
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** This thread's time on a CPU so far, µs. */
function ownRunTimeUs(): number {
  const [ns] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
  return Number(ns) / 1000;
}

/** The run time an empty timer callback costs when it fires every `ms`, µs a wake. */
export async function wakeCostUs(ms: number, seconds: number): Promise<number> {
  const wakes = Math.max(10, Math.round((seconds * 1000) / ms));
  await sleep(ms); // start from a thread that has slept like the ones measured
  const before = ownRunTimeUs();
  await new Promise<void>((resolve) => {
    let fired = 0;
    const timer = setInterval(() => {
      if (++fired < wakes) return;
      clearInterval(timer);
      resolve();
    }, ms);
  });
  return (ownRunTimeUs() - before) / wakes;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '3' },
      every: { type: 'string', default: '1,5,50' },
    },
  });
  const seconds = Number(values.seconds);
  for (const ms of values.every.split(',').map(Number)) {
    if (!(ms > 0) || !(seconds > 0)) throw new Error('--every and --seconds take positive numbers');
    const us = await wakeCostUs(ms, seconds);
    console.log(`a wake every ${ms} ms: ${us.toFixed(1)} µs of run time each`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main().catch((error: Error) => {
    console.error(`wake-cost: ${error.message}`);
    process.exitCode = 2;
  });
}
