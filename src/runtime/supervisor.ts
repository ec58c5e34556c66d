// Keeps one group's actor thread alive: starts it, waits for its "ready",
// watches its heartbeat, and when it dies (or stops answering) restarts it with a growing
// pause. What the dead thread held is handed back at once, with the reason it died, from the
// mirror of its leases it kept in shared memory (lease-mirror.ts); what the mirror missed comes
// back when its lease runs out. A crash or a hang costs time, never messages.
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { errors } from '../base/errors.js';
import { redactText } from '../base/redact.js';
import type { ActorApi } from './actor.js';
import type { ActorReport, ActorThreadData } from './actor-thread.js';
import { watchForHang } from './hang-watch.js';
import { LEASE_MIRROR_BYTES } from './lease-mirror.js';
import { type Remote, release, remote, withTimeout } from './rpc.js';
import { StatBlock } from './stat-block.js';
import { workerFile } from './worker-path.js';

/** The actor's end of a pool port, and how to close the launcher's end when the actor is gone. */
export interface PoolPort {
  actorEnd: MessagePort;
  close(): void;
}

export interface SupervisorHooks {
  /** what the new thread gets; ports are made fresh for every start */
  threadData(
    restarts: number,
    coordinatorPort: MessagePort,
    poolPort: MessagePort | null,
    stats: SharedArrayBuffer,
    leases: SharedArrayBuffer,
  ): ActorThreadData;
  /** the coordinator's end of a new actor's port, with the group's figures */
  attach(
    group: number,
    port: MessagePort,
    stats: SharedArrayBuffer,
    threadId: number,
  ): Promise<void>;
  detach(group: number): Promise<void>;
  /** a pool port for a new actor, or null without a pool */
  poolPort(): PoolPort | null;
  crashed(group: number, reason: string, restarts: number, pauseMs: number): void;
  /** hands back at once what a dead thread's lease mirror holds, saying why it died */
  handBack(group: number, leases: SharedArrayBuffer, reason: string): Promise<void>;
}

export interface SupervisorTimes {
  /** how long an actor may take to say ready */
  readyTimeoutMs: number;
  /** an actor that does not beat this long is ended and restarted (0 = never) */
  hangTimeoutMs: number;
}

const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 10_000;
/** An actor that lived this long starts its pauses from the beginning again. */
const HEALTHY_MS = 30_000;
/** How long a stop waits for a dead thread's leases to be handed back. */
const HAND_BACK_MS = 5000;

export class Supervisor {
  readonly group: number;
  readonly #hooks: SupervisorHooks;
  readonly #times: SupervisorTimes;
  #worker: Worker | null = null;
  /** the running thread's lease mirror: a new one for each thread, read once it is gone */
  #leases: SharedArrayBuffer | null = null;
  #actor: Remote<ActorApi> | null = null;
  #poolPort: PoolPort | null = null;
  #restarts = 0;
  #pause = FIRST_PAUSE_MS;
  #stopping = false;
  #restartTimer: NodeJS.Timeout | undefined;
  #stopHangWatch: () => void = () => undefined;
  #crashReason: string | null = null;
  /** one block for the group's whole life: counters go on across restarts */
  readonly stats = new StatBlock();

  constructor(group: number, hooks: SupervisorHooks, times: SupervisorTimes) {
    this.group = group;
    this.#hooks = hooks;
    this.#times = times;
  }

  get restarts(): number {
    return this.#restarts;
  }

  get actor(): Remote<ActorApi> | null {
    return this.#actor;
  }

  /** Resolves when the actor said ready; rejects with its reason when it could not start. */
  async start(): Promise<void> {
    const channel = new MessageChannel();
    const pool = this.#hooks.poolPort();
    this.#poolPort = pool;
    const leases = new SharedArrayBuffer(LEASE_MIRROR_BYTES);
    const data = this.#hooks.threadData(
      this.#restarts,
      channel.port1,
      pool?.actorEnd ?? null,
      this.stats.buffer,
      leases,
    );
    const transfer = pool ? [channel.port1, pool.actorEnd] : [channel.port1];
    const worker = new Worker(workerFile('actor'), { workerData: data, transferList: transfer });
    this.#worker = worker;
    this.#leases = leases;
    const bornAt = Date.now();
    const report = new Promise<ActorReport>((resolve) => {
      worker.on('message', (message: ActorReport) => {
        if (message && (message.kind === 'ready' || message.kind === 'failed')) resolve(message);
      });
      worker.once('exit', (code) =>
        resolve({ kind: 'failed', reason: `thread exited with code ${code}` }),
      );
      // Redacted here, at the source: a reason goes to the log, the stats, errors and Redis.
      worker.once('error', (error) =>
        resolve({ kind: 'failed', reason: redactText(error.message) }),
      );
    });
    const answer = await withTimeout(
      report,
      this.#times.readyTimeoutMs,
      `actor ${this.group} start`,
    ).catch((error: Error): ActorReport => ({ kind: 'failed', reason: error.message }));
    // stop() may have come while this thread was starting: it must not stay behind.
    if (answer.kind === 'failed' || this.#stopping) {
      channel.port2.close();
      this.#closePoolPort();
      await worker.terminate();
      // Ready, it may have claimed already.
      if (answer.kind === 'ready') await this.#handBack(leases, 'stopped while starting');
      const reason = answer.kind === 'failed' ? answer.reason : 'stopped while starting';
      throw errors.actor(`actor ${this.group} failed to start: ${reason}`);
    }
    await this.#hooks.attach(this.group, channel.port2, this.stats.buffer, worker.threadId);
    if (this.#stopping) {
      this.#closePoolPort();
      await worker.terminate();
      await this.#handBack(leases, 'stopped while starting');
      throw errors.actor(`actor ${this.group} failed to start: stopped while starting`);
    }
    this.#actor = remote<ActorApi>(worker);
    worker.once('exit', (code) => void this.#exited(worker, code, Date.now() - bornAt, leases));
    worker.on('error', (error) => {
      this.#crashReason = redactText(error.stack ?? error.message);
    });
    this.#watchForHang(worker);
  }

  /**
   * Ends the thread as a crash would (what it held is handed back, `reason` said), and the usual
   * restart follows: for an operator who wants a fresh actor, and for tests of what restarts leave.
   */
  async kill(reason: string): Promise<void> {
    const worker = this.#worker;
    if (!worker || this.#stopping) return;
    this.#crashReason = reason;
    await worker.terminate();
  }

  /** Drain (finish or hand back in-flight work), then end the thread. */
  async stop(graceMs: number): Promise<{ released: number }> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    this.#stopHangWatch();
    const worker = this.#worker;
    const actor = this.#actor;
    const leases = this.#leases;
    this.#worker = null;
    this.#actor = null;
    this.#leases = null;
    if (!worker || !actor) {
      // Still starting (or waiting to restart): nothing leased yet, end the thread.
      await worker?.terminate();
      return { released: 0 };
    }
    let result: { released: number } | null = null;
    try {
      result = await withTimeout(actor.drain(graceMs), graceMs + 5000, `actor ${this.group} drain`);
    } catch {
      // A stuck actor: ended below, and what it held handed back.
    }
    release(actor);
    await this.#hooks.detach(this.group);
    await worker.terminate();
    this.#closePoolPort();
    if (!result && leases)
      await this.#handBack(leases, 'ended at shutdown, still busy after its drain');
    return result ?? { released: 0 };
  }

  /**
   * A thread stuck in a handler that never yields cannot beat (nor renew its leases): past
   * hangTimeoutMs without a beat it is ended, and its exit restarts it like a crash.
   */
  #watchForHang(worker: Worker): void {
    const limit = this.#times.hangTimeoutMs;
    if (limit <= 0) return;
    this.#stopHangWatch = watchForHang(this.stats, limit, () => {
      if (worker !== this.#worker) return;
      this.#crashReason = `hung: no heartbeat for ${limit} ms`;
      void worker.terminate();
    });
  }

  /**
   * Never rejects, and a stop waits for it HAND_BACK_MS at most (Redis away): what is not handed
   * back comes back when its lease runs out.
   */
  #handBack(leases: SharedArrayBuffer, reason: string): Promise<void> {
    const call = this.#hooks.handBack(this.group, leases, reason);
    return withTimeout(call, HAND_BACK_MS, `actor ${this.group} hand-back`).catch(() => undefined);
  }

  #closePoolPort(): void {
    this.#poolPort?.close();
    this.#poolPort = null;
  }

  async #exited(
    worker: Worker,
    code: number,
    livedMs: number,
    leases: SharedArrayBuffer,
  ): Promise<void> {
    if (this.#stopping || worker !== this.#worker) return;
    this.#stopHangWatch();
    if (this.#actor) release(this.#actor);
    this.#actor = null;
    this.#worker = null;
    this.#leases = null;
    this.#closePoolPort();
    await this.#hooks.detach(this.group);
    if (livedMs > HEALTHY_MS) this.#pause = FIRST_PAUSE_MS;
    this.#restarts++;
    const pause = this.#pause;
    this.#pause = Math.min(MAX_PAUSE_MS, this.#pause * 2);
    const reason = this.#crashReason ?? `thread exited with code ${code}`;
    this.#crashReason = null;
    // Not waited for: the new thread's leases have tokens of their own, which it never touches.
    void this.#handBack(leases, reason);
    this.#hooks.crashed(this.group, reason, this.#restarts, pause);
    this.#restartTimer = setTimeout(() => void this.#restart(), pause);
  }

  async #restart(): Promise<void> {
    if (this.#stopping) return;
    try {
      await this.start();
    } catch (error) {
      if (this.#stopping) return;
      // Could not come back (Redis down?): try again after a longer pause.
      this.#hooks.crashed(this.group, (error as Error).message, this.#restarts, this.#pause);
      this.#restartTimer = setTimeout(() => void this.#restart(), this.#pause);
      this.#pause = Math.min(MAX_PAUSE_MS, this.#pause * 2);
    }
  }
}
