// launchActors(): checks what must hold before any thread starts (Redis reachable, its policy
// and clock, the data format), then starts the launcher's threads. Kept apart from the
// Launcher class, which is what runs afterwards.
import { hostname } from 'node:os';
import type { QueueOptions } from '../queue/config.js';
import { Queue } from '../queue/queue.js';
import { ensureReachable } from '../redis/connection.js';
import { Launcher } from './launcher.js';
import { withTimeout } from './rpc.js';
import { planStart, type RuntimeOptions } from './start-options.js';

/** How long start waits for the data format check (as long as for an actor to be ready). */
const FORMAT_CHECK_MS = 15_000;

/**
 * The data format, checked (and raised to ours) before anything starts: the coordinator's intake
 * writes into the groups, and would before an actor could refuse data a newer skyq wrote.
 */
async function checkDataFormat(options: QueueOptions): Promise<void> {
  const queue = new Queue({ ...options, warnEviction: false });
  try {
    await withTimeout(queue.ready(), FORMAT_CHECK_MS, 'the data format check');
  } finally {
    await queue.close();
  }
}

/** Starts the actors and the coordinator; resolves when every actor said it is ready. */
export async function launchActors(options: RuntimeOptions = {}): Promise<Launcher> {
  const plan = planStart(options);
  // One quick look before any thread starts: no Redis fails the start in seconds, with the
  // reason, not once per actor after each one's connection gave up.
  await ensureReachable(plan.queue);
  const launcher = new Launcher(plan);
  try {
    await launcher._checkServers();
    await checkDataFormat(plan.queue);
    await launcher._start(
      {
        launcherId: launcher.id,
        host: hostname(),
        pid: process.pid,
        startedAt: Date.now(),
        groups: plan.groups,
        queue: plan.queue,
        publish: plan.publish,
        publishEveryMs: 1000,
        watch: plan.watch,
        intake: plan.intake,
        zsetIntake: plan.zsetIntake,
        logDir: plan.logDir,
        logLevel: plan.logLevel,
      },
      options.paused === true,
    );
  } catch (error) {
    await launcher.stop(0);
    throw error;
  }
  return launcher;
}
