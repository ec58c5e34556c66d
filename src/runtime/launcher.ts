// The launcher: one coordinator thread, one actor thread per group, an
// optional piscina pool for CPU-heavy handlers. startActors() resolves only
// when every actor said it is ready (connected, scripts loaded, handler
// loaded), and rejects with the reason when one could not start.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { type QueueOptions, queueConfig } from '../config.js';
import { errors } from '../errors.js';
import type { Message } from '../message.js';
import { checkDuration, checkGroup, checkInteger } from '../options.js';
import type { Coordinator, CoordinatorData, DebugCommand, LauncherStats } from './coordinator.js';
import { handlerUrl } from './handler.js';
import { DEFAULT_LOG_DIR, type FileLogger, fileLogger, launcherLogFile } from './logger.js';
import { type Remote, release, remote, serve, transferPort, withTimeout } from './rpc.js';
import { Supervisor } from './supervisor.js';
import { workerFile } from './worker-path.js';

export interface StartOptions extends QueueOptions {
  /** run actors for these groups only (default: all) */
  only?: number[];
  /** handlers running at once per actor (default 100) */
  concurrency?: number;
  /** most messages one poll leases (default 200) */
  batch?: number;
  /** lease length, renewed while a handler runs (default 30 s) */
  leaseMs?: number;
  /** fail a handler that runs longer than this (default 0: no limit) */
  timeoutMs?: number;
  /** lease messages due within this window and start them on a local timer (default 20 ms) */
  lookaheadMs?: number;
  /** handler module path; default: log each message as consumed */
  handler?: string;
  /** run the handler module on a piscina pool of this many threads (default 0: in the actor) */
  pool?: number;
  logDir?: string;
  logLevel?: string;
  /** how long graceful shutdown waits for running handlers (default 10 s) */
  graceMs?: number;
  /** publish live figures to Redis for `skyq stats` (default true) */
  publishStats?: boolean;
  /** start the actors without claiming until resume() */
  paused?: boolean;
}

export class Launcher {
  readonly id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly groups: number[];
  readonly log: FileLogger;
  readonly #supervisors: Supervisor[] = [];
  #coordinatorWorker: Worker | null = null;
  #coordinator: Remote<Coordinator> | null = null;
  #pool: Piscina | null = null;
  readonly #poolPorts: MessagePort[] = [];
  readonly #graceMs: number;
  #stopped: Promise<void> | null = null;
  #paused = false;

  constructor(groups: number[], log: FileLogger, graceMs: number) {
    this.groups = groups;
    this.log = log;
    this.#graceMs = graceMs;
  }

  async stats(timeoutMs = 1000): Promise<LauncherStats> {
    return this.#coordinatorProxy().stats(timeoutMs);
  }

  async debug(group: number, command: DebugCommand, timeoutMs = 1000): Promise<unknown> {
    return this.#coordinatorProxy().debug(group, command, timeoutMs);
  }

  /** Actors started with `paused` begin claiming (restarted ones do not pause again). */
  async resume(): Promise<void> {
    this.#paused = false;
    await Promise.all(this.#supervisors.map((s) => s.actor?.resume()));
  }

  restarts(group: number): number {
    return this.#supervisors.find((s) => s.group === group)?.restarts ?? 0;
  }

  /** Graceful: stop claiming, let handlers finish up to graceMs, hand the rest back. */
  stop(graceMs = this.#graceMs): Promise<void> {
    this.#stopped ??= this.#stop(graceMs);
    return this.#stopped;
  }

  async #stop(graceMs: number): Promise<void> {
    const results = await Promise.all(this.#supervisors.map((s) => s.stop(graceMs)));
    const released = results.reduce((sum, r) => sum + r.released, 0);
    if (this.#coordinator) {
      await withTimeout(this.#coordinator.close(), 5000, 'coordinator close').catch(
        () => undefined,
      );
      release(this.#coordinator);
      this.#coordinator = null;
    }
    await this.#coordinatorWorker?.terminate();
    for (const port of this.#poolPorts) port.close();
    await this.#pool?.destroy();
    this.log.logger.info({ event: 'stopped', released }, 'launcher stopped');
    this.log.flush();
  }

  async _start(options: StartOptions, data: Omit<CoordinatorData, 'groups'>): Promise<void> {
    const worker = new Worker(workerFile('coordinator'), {
      workerData: { ...data, groups: this.groups },
    });
    this.#coordinatorWorker = worker;
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        worker.once('message', () => resolve());
        worker.once('error', reject);
      }),
      10_000,
      'coordinator start',
    );
    this.#coordinator = remote<Coordinator>(worker);
    const url = options.handler ? handlerUrl(options.handler) : null;
    const poolSize = checkInteger('pool', options.pool ?? 0, 0, 256);
    if (poolSize > 0) {
      if (!url) throw errors.invalidOption('pool', 'needs a handler module (--handler)');
      this.#pool = new Piscina({
        filename: workerFile('handler-task').href,
        maxThreads: poolSize,
        minThreads: poolSize,
      });
    }
    const leaseMs = checkDuration('leaseMs', options.leaseMs ?? 30_000);
    const settings = {
      concurrency: checkInteger('concurrency', options.concurrency ?? 100, 1, 100_000),
      batch: checkInteger('batch', options.batch ?? 200, 1, 10_000),
      leaseMs,
      timeoutMs: checkDuration('timeoutMs', options.timeoutMs ?? 0),
      // A message leased ahead must not see its lease run out before it is due.
      lookaheadMs: Math.min(
        checkDuration('lookaheadMs', options.lookaheadMs ?? 100, 1000),
        Math.floor(leaseMs / 2),
      ),
    };
    const queue = pickQueueOptions(options);
    this.#paused = options.paused === true;
    const coordinator = this.#coordinator;
    for (const group of this.groups) {
      this.#supervisors.push(
        new Supervisor(
          group,
          {
            threadData: (restarts, coordinatorPort, poolPort) => ({
              settings: { group, ...settings, paused: this.#paused },
              queue,
              handler: url,
              logDir: options.logDir ?? DEFAULT_LOG_DIR,
              logLevel: options.logLevel ?? 'info',
              restarts,
              coordinatorPort,
              poolPort,
            }),
            attach: (g, port) => coordinator.attach(g, transferPort(port)),
            detach: (g) => coordinator.detach(g),
            poolPort: () => this.#newPoolPort(url),
            crashed: (g, reason, restarts, pauseMs) => {
              this.log.logger.error(
                { event: 'crash', group: g, reason, restarts, pauseMs },
                `actor ${g} crashed`,
              );
              void coordinator.noteCrash(g, reason);
            },
          },
          15_000,
        ),
      );
    }
    await Promise.all(this.#supervisors.map((s) => s.start()));
    this.log.logger.info(
      { event: 'started', groups: this.groups, id: this.id },
      'launcher started',
    );
  }

  #newPoolPort(url: string | null): MessagePort | null {
    const pool = this.#pool;
    if (!pool || !url) return null;
    const { port1, port2 } = new MessageChannel();
    serve({ run: (job: Message) => pool.run({ handler: url, job }) }, port1);
    this.#poolPorts.push(port1);
    return port2;
  }

  #coordinatorProxy(): Remote<Coordinator> {
    if (!this.#coordinator) throw errors.closed('launcher');
    return this.#coordinator;
  }
}

export async function startActors(options: StartOptions = {}): Promise<Launcher> {
  if (options.connection) {
    throw errors.invalidOption(
      'connection',
      'actors make their own connections: give redis or cluster',
    );
  }
  const config = queueConfig(pickQueueOptions(options));
  const all = Array.from({ length: config.groups }, (_, g) => g);
  const groups = options.only
    ? [...new Set(options.only.map((g) => checkGroup('only', g, config.groups)))].sort(
        (a, b) => a - b,
      )
    : all;
  const logDir = options.logDir ?? DEFAULT_LOG_DIR;
  const launcher = new Launcher(
    groups,
    fileLogger(launcherLogFile(logDir), { launcher: true }),
    options.graceMs ?? 10_000,
  );
  const publish =
    options.publishStats === false
      ? null
      : ({
          redis: options.redis,
          cluster: options.cluster,
          tls: options.tls,
        } as CoordinatorData['publish']);
  try {
    await launcher._start(options, {
      launcherId: launcher.id,
      host: hostname(),
      pid: process.pid,
      startedAt: Date.now(),
      prefix: config.prefix,
      publish,
      publishEveryMs: 1000,
    });
  } catch (error) {
    await launcher.stop(0);
    throw error;
  }
  return launcher;
}

/** The Queue options inside StartOptions, for validation. */
function pickQueueOptions(options: StartOptions): QueueOptions {
  const { redis, cluster, tls, prefix, groups, scoreUnit, maxBodyBytes, attempts, backoff } =
    options;
  return Object.fromEntries(
    Object.entries({
      redis,
      cluster,
      tls,
      prefix,
      groups,
      scoreUnit,
      maxBodyBytes,
      attempts,
      backoff,
    }).filter(([, v]) => v !== undefined),
  );
}
