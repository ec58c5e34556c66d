/**
 * An idle launcher measured in a process of its own, as a user's `skyq start` or application
 * runs it: startActors' defaults and the no-op handler, then two windows of its own CPU (all
 * threads) and of Redis's figures. compare.js and targets.js run every other system and
 * workload in their own process first; a launcher measured there paid for what they left, which
 * is no idle launcher's cost. The heap those runs left in its main isolate kept
 * the main thread and V8's platform threads collecting: 23 ms a second of those threads against
 * 1.5 ms in a fresh process (0.029 cores in all, against 0.005–0.009; probe of 7 Dec 2026).
 *   node dist/bench/idle-launcher.js --url redis://127.0.0.1:P --window-s 10 --settle-s 30
 * prints one JSON line: { first, settled } as IdleCost.
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { Redis } from 'ioredis';
import {
  BENCH_HANDLER,
  IDLE_AFTER_READY_MS,
  type IdleCost,
  measureIdle,
  tempLogDir,
  timedStart,
} from './start-cost.js';

export interface IdleWindows {
  /** the window from IDLE_AFTER_READY_MS after ready */
  first: IdleCost;
  /** the same length, settleSeconds after the first one ended */
  settled: IdleCost;
}

/** Runs the idle launcher in a child process on `url` and returns what it measured. */
export async function measureIdleLauncher(
  url: string,
  windowSeconds: number,
  settleSeconds: number,
  actorNice?: number,
): Promise<IdleWindows> {
  const args = [fileURLToPath(import.meta.url), '--url', url];
  args.push('--window-s', String(windowSeconds), '--settle-s', String(settleSeconds));
  if (actorNice !== undefined) args.push('--actor-nice', String(actorNice));
  const timeout = (windowSeconds * 2 + settleSeconds + 60) * 1000;
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as IdleWindows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      'window-s': { type: 'string', default: '10' },
      'settle-s': { type: 'string', default: '30' },
      'actor-nice': { type: 'string' },
    },
  });
  if (!values.url) throw new Error('--url: required (a private redis-server)');
  const windowMs = Number(values['window-s']) * 1000;
  const nice =
    values['actor-nice'] === undefined ? {} : { actorNice: Number(values['actor-nice']) };
  const logs = tempLogDir();
  const monitor = new Redis(values.url);
  const { launcher } = await timedStart({
    redis: values.url,
    handler: BENCH_HANDLER,
    logDir: logs.dir,
    ...nice,
  });
  try {
    await sleep(IDLE_AFTER_READY_MS);
    const first = await measureIdle(monitor, windowMs);
    await sleep(Number(values['settle-s']) * 1000);
    const settled = await measureIdle(monitor, windowMs);
    console.log(JSON.stringify({ first, settled } satisfies IdleWindows));
  } finally {
    await launcher.stop(1000);
    monitor.disconnect();
    logs.remove();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
