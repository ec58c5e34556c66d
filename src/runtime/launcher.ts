// The launcher: one coordinator thread, one actor thread per group, an
// optional piscina pool for CPU-heavy handlers. startActors() resolves only
// when every actor said it is ready (connected, the data format checked, handler
// loaded), and rejects with the reason when one could not start.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { MessageChannel, Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { errors } from '../base/errors.js';
import { type QueueOptions, queueConfig } from '../queue/config.js';
import type { IntakeSpec } from '../queue/intake/spec.js';
import type { ZsetIntakeSpec } from '../queue/intake/zset-spec.js';
import { readThrown } from '../queue/thrown.js';
import { connect } from '../redis/connection.js';
import type { Coordinator, CoordinatorData, DebugCommand } from './coordinator.js';
import { logHandBack } from './hand-back.js';
import type { PoolJob } from './handler.js';
import type { LauncherStats } from './launcher-stats.js';
import { launcherLogFile } from './log-names.js';
import { type FileLogger, fileLogger } from './logger.js';
import { type Remote, release, remote, serve, transferPort, withTimeout } from './rpc.js';
import { reportTo, ServerChecks, type ServerState } from './server-checks.js';
import type { StartPlan } from './start-options.js';
import { type PoolPort, Supervisor } from './supervisor.js';
import { lowerHelperThreads } from './thread-priority.js';
import { workerFile } from './worker-path.js';

export type { ServerState } from './server-checks.js';
export type { RuntimeOptions } from './start-options.js';

/** How long start waits for the servers' policy and clock before going on without them. */
const START_CHECK_MS = 5000;

/** A server started beside the launcher (src/start.ts's HTTP server), closed first on stop. */
export interface AttachedServer {
  /** where it is reached */
  readonly url: string;
  /** stops it */
  close(): Promise<void>;
}

/**
 * A running set of actors, one worker thread per group, and their coordinator (what
 * startActors() resolves with): their figures, restarts, and a graceful stop.
 */
export class Launcher {
  /** this launcher's id: host, pid and a random part */
  readonly id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  /** the groups it runs actors for */
  readonly groups: number[];
  /** the lists the intake moves into skyq, checked, in order */
  readonly intake: IntakeSpec[];
  /** the sorted sets the intake consumes as their members fall due, checked, in order */
  readonly zsetIntake: ZsetIntakeSpec[];
  readonly #log: FileLogger;
  readonly #plan: StartPlan;
  readonly #supervisors: Supervisor[] = [];
  #coordinatorWorker: Worker | null = null;
  #coordinator: Remote<Coordinator> | null = null;
  #pool: Piscina | null = null;
  #stopped: Promise<void> | null = null;
  #paused = false;
  #checks: ServerChecks | null = null;
  /** gives back this launcher's hold on Node's helper threads' priority (thread-priority.ts) */
  #helpers: () => void = () => undefined;
  /** the HTTP server, when started with the `http` option (set by src/start.ts) */
  http: AttachedServer | null = null;

  /**
   * @internal startActors() makes launchers. The log is made here, so the class's public face
   * names no type of the logger's (pino's need esModuleInterop in a consumer's build).
   */
  constructor(plan: StartPlan) {
    this.#plan = plan;
    this.groups = plan.groups;
    this.intake = plan.intake;
    this.zsetIntake = plan.zsetIntake;
    this.#log = fileLogger(launcherLogFile(plan.logDir), { launcher: true }, plan.logLevel);
  }

  /** The Queue options the actors were started with (checked). */
  get queueOptions(): QueueOptions {
    return this.#plan.queue;
  }

  /** Each Redis server's eviction policy and clock skew, as last checked. */
  servers(): ServerState[] {
    return this.#checks?.states ?? [];
  }

  /** Every actor's figures, read from shared memory: never waits on a busy actor. */
  async stats(): Promise<LauncherStats> {
    return this.#coordinatorProxy().stats();
  }

  /** Asks one actor a debug command (ping, stat, mem); 'TIMEOUT' when it does not answer in time. */
  async debug(group: number, command: DebugCommand, timeoutMs = 1000): Promise<unknown> {
    return this.#coordinatorProxy().debug(group, command, timeoutMs);
  }

  /** Actors started with `paused` begin claiming (restarted ones do not pause again). */
  async resume(): Promise<void> {
    this.#paused = false;
    await Promise.all(this.#supervisors.map((s) => s.actor?.resume()));
  }

  /** Ends an actor's thread and lets its supervisor start a new one (a restart, as after a crash). */
  async restart(group: number): Promise<void> {
    const supervisor = this.#supervisors.find((s) => s.group === group);
    if (!supervisor) throw errors.invalidOption('group', `this launcher runs no group ${group}`);
    await supervisor.kill('restarted on request');
  }

  /** How many times the actor of `group` was restarted. */
  restarts(group: number): number {
    return this.#supervisors.find((s) => s.group === group)?.restarts ?? 0;
  }

  /** Graceful: stop claiming, let handlers finish up to graceMs, hand the rest back. */
  stop(graceMs = this.#plan.graceMs): Promise<void> {
    this.#stopped ??= this.#stop(graceMs);
    return this.#stopped;
  }

  async #stop(graceMs: number): Promise<void> {
    await this.http?.close();
    this.#checks?.stop();
    // Nothing more comes in from intake lists while the actors finish what they have.
    if (this.#coordinator) {
      await withTimeout(this.#coordinator.stopIntake(), 10_000, 'intake stop').catch(
        () => undefined,
      );
    }
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
    await this.#pool?.destroy();
    this.#checkClient?.disconnect();
    this.#helpers();
    this.#log.logger.info({ event: 'stopped', released }, 'launcher stopped');
    // The process may go on (a library user, a benchmark): its fd and exit listener go back.
    this.#log.close();
  }

  #checkClient: ReturnType<typeof connect> | null = null;

  /**
   * @internal
   * Checks every server before any actor starts: an evicting policy refuses the start (unless
   * allowed); then checks again after every reconnect. A server that cannot be read in time
   * does not hold the start up: the checks go on in the background.
   */
  async _checkServers(): Promise<void> {
    const plan = this.#plan;
    const client = connect(plan.queue, { name: 'skyq-checks' });
    client.on('error', () => undefined); // the actors report outages
    this.#checkClient = client;
    const { prefix, groups } = queueConfig(plan.queue);
    const checks = new ServerChecks(client, {
      allowEviction: plan.allowEviction,
      wallClock: plan.wallClock,
      report: reportTo(this.#log.logger),
      dataset: { prefix, groups: Array.from({ length: groups }, (_, g) => g) },
    });
    this.#checks = checks;
    await withTimeout(checks.check(), START_CHECK_MS, 'server checks').catch(() => undefined);
    const refusal = checks.refusal();
    if (refusal) throw refusal;
    checks.watch();
  }

  /** @internal Starts the coordinator, the pool and one supervised actor per group. */
  async _start(data: CoordinatorData, paused: boolean): Promise<void> {
    const plan = this.#plan;
    this.#helpers = lowerHelperThreads(plan.actorNice);
    const worker = new Worker(workerFile('coordinator'), { workerData: data });
    this.#coordinatorWorker = worker;
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        worker.once('message', () => resolve());
        worker.once('error', reject);
      }),
      10_000,
      'coordinator start',
    );
    const coordinator = remote<Coordinator>(worker);
    this.#coordinator = coordinator;
    const watching = await coordinator.start();
    const checks = this.#checks;
    if (checks) {
      void coordinator.noteServers(checks.states);
      checks.onChange((states) => void coordinator.noteServers(states).catch(() => undefined));
    }
    for (const note of watching.notes) this.#log.logger.warn({ event: 'watch', note }, note);
    if (plan.poolSize > 0) {
      this.#pool = new Piscina({
        filename: workerFile('handler-task').href,
        maxThreads: plan.poolSize,
        minThreads: plan.poolSize,
      });
      // The module loads on a pool thread at its first task: load it now, on one, so a module
      // that cannot load refuses the start as it does without a pool, instead of failing every
      // job (retried, then dead-lettered) under a launcher that said it was ready.
      // What a pool thread throws arrives as a plain Error: made skyq's again, its one line.
      if (plan.handlerUrl) {
        await this.#pool
          .run({ handler: plan.handlerUrl, jobs: [], reportTo: '' })
          .catch((error: unknown) => {
            throw errors.actor(readThrown(error).message);
          });
      }
    }
    this.#paused = paused;
    for (const group of this.groups) {
      this.#supervisors.push(
        new Supervisor(
          group,
          {
            threadData: (restarts, coordinatorPort, poolPort, stats, leases) => ({
              settings: { group, ...plan.actor, paused: this.#paused },
              queue: plan.queue,
              handler: plan.handlerUrl,
              logDir: plan.logDir,
              logLevel: plan.logLevel,
              nice: plan.actorNice,
              restarts,
              stats,
              leases,
              coordinatorPort,
              poolPort,
            }),
            attach: (g, port, stats, threadId) =>
              coordinator.attach(g, transferPort(port), stats, threadId),
            detach: (g) => coordinator.detach(g),
            poolPort: () => this.#newPoolPort(group),
            crashed: (g, reason, restarts, pauseMs) => {
              this.#log.logger.error(
                { event: 'crash', group: g, reason, restarts, pauseMs },
                `actor ${g} crashed`,
              );
              void coordinator.noteCrash(g, reason);
            },
            handBack: (g, leases, reason) =>
              logHandBack(this.#log.logger, g, coordinator.handBack(g, leases, reason)),
          },
          { readyTimeoutMs: 15_000, hangTimeoutMs: plan.hangTimeoutMs },
        ),
      );
    }
    await Promise.all(this.#supervisors.map((s) => s.start()));
    const { groups, id } = this;
    const keyspaceEvents = watching.keyspaceEvents;
    this.#log.logger.info({ event: 'started', groups, id, keyspaceEvents }, 'launcher started');
  }

  /** A port an actor uses to run its handler on the shared pool; null without a pool. */
  #newPoolPort(group: number): PoolPort | null {
    const pool = this.#pool;
    const url = this.#plan.handlerUrl;
    if (!pool || !url) return null;
    const { port1, port2 } = new MessageChannel();
    const tasks = new Map<number, AbortController>();
    const run = (jobs: PoolJob[], reportTo: string, task: number) => {
      const controller = new AbortController();
      tasks.set(task, controller);
      return pool
        .run({ handler: url, jobs, reportTo }, { signal: controller.signal })
        .finally(() => tasks.delete(task));
    };
    const cancel = (task: number) => {
      const controller = tasks.get(task);
      if (!controller) return;
      this.#log.logger.warn(
        { event: 'pool-cancel', group, task },
        'a pool task whose every job was told to stop is cancelled (a thread running it is replaced)',
      );
      controller.abort();
    };
    serve({ run, cancel }, port1);
    return { actorEnd: port2, close: () => port1.close() };
  }

  #coordinatorProxy(): Remote<Coordinator> {
    if (!this.#coordinator) throw errors.closed('launcher');
    return this.#coordinator;
  }
}
