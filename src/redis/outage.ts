// One line when Redis goes away and one when it is back, however many
// reconnect attempts lie between: the actors and the coordinator hand their
// client and a callback (usually a log line) to watchConnection().
//
// A closed or failed socket is seen at once from the client's events. A server
// that hangs (SIGSTOP, a stuck disk) closes nothing, so with `heartbeatMs` a
// PING that gets no answer in time counts as down too. While down, a PING
// every `probeMs` notices the return (a cluster client says "ready" only once).
// A drop that reconnects at the first attempt, within a second, is no outage.
import { isCluster, type RedisClient } from './connection.js';
import { describeConnectionError } from './failure.js';

/** How long a closed connection may take to give its reason before it is reported "lost". */
const LOST_GRACE_MS = 1000;

export type ConnectionChange = { state: 'down'; reason: string } | { state: 'up'; downMs: number };

export interface WatchOptions {
  /** while up, PING this often and call it down when no answer comes (default 0: off) */
  heartbeatMs?: number;
  /** how long a heartbeat PING may take (default 2000 ms) */
  heartbeatTimeoutMs?: number;
  /** while down, PING this often to notice the return (default 1000 ms) */
  probeMs?: number;
}

export interface ConnectionWatch {
  readonly state: 'up' | 'down';
  /**
   * One heartbeat PING now, for a caller whose own timer stands in for `heartbeatMs` (an
   * actor's chores round: one wake-up for all of them). While down, the probes go on alone.
   */
  heartbeat(): void;
  stop(): void;
}

/**
 * PINGs raced against a timer: true when answered in time. A PING that got no
 * answer is waited for again instead of sending another, so a frozen server
 * does not collect one PING per check.
 */
function pinger(client: RedisClient): (ms: number) => Promise<boolean> {
  let inFlight: Promise<boolean> | null = null;
  return (ms) => {
    inFlight ??= client.ping().then(
      () => true,
      () => false,
    );
    const ping = inFlight;
    void ping.then(() => {
      if (inFlight === ping) inFlight = null;
    });
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void ping.then((answered) => {
        clearTimeout(timer);
        resolve(answered);
      });
    });
  };
}

/**
 * Calls `report` exactly once per change: { state: 'down', reason } when the
 * connection is lost, { state: 'up', downMs } when it answers again. The client
 * is taken as up at the start.
 */
export function watchConnection(
  client: RedisClient,
  report: (change: ConnectionChange) => void,
  options: WatchOptions = {},
): ConnectionWatch {
  const heartbeatMs = options.heartbeatMs ?? 0;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 2000;
  const probeMs = options.probeMs ?? 1000;
  let state: 'up' | 'down' = 'up';
  let downSince = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let checking = false;
  const pingWithin = pinger(client);

  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    const every = state === 'down' ? probeMs : heartbeatMs;
    if (every > 0) timer = setTimeout(check, every);
  };
  const down = (reason: string) => {
    if (stopped || state === 'down') return;
    state = 'down';
    downSince = Date.now();
    report({ state: 'down', reason });
    schedule();
  };
  const up = () => {
    if (stopped || state === 'up') return;
    state = 'up';
    report({ state: 'up', downMs: Date.now() - downSince });
    schedule();
  };
  // One PING at a time: a slow answer must not pile up probes behind it.
  const check = async () => {
    if (checking || stopped) return;
    // A standalone client that is reconnecting will say "ready"; PINGs would only queue up.
    if (state === 'down' && !isCluster(client) && client.status !== 'ready') return schedule();
    checking = true;
    const answered = await pingWithin(state === 'down' ? probeMs : heartbeatTimeoutMs);
    checking = false;
    if (answered) up();
    else down(`no answer to PING within ${heartbeatTimeoutMs} ms`);
    schedule();
  };

  // A dropped connection usually tells why at the first reconnect attempt
  // ("connection refused"): wait that long for the reason before saying "lost".
  let lost: NodeJS.Timeout | undefined;
  const settleLost = () => {
    clearTimeout(lost);
    lost = undefined;
  };
  const onError = (error: Error) => {
    settleLost();
    down(describeConnectionError(error));
  };
  const onClose = () => {
    if (state === 'up' && lost === undefined && !stopped)
      lost = setTimeout(() => down('connection lost'), LOST_GRACE_MS);
  };
  // A standalone client that reconnected says so; a cluster is probed instead.
  const onReady = () => {
    settleLost();
    up();
  };
  client.on('error', onError);
  client.on('reconnecting', onClose);
  if (isCluster(client)) client.on('node error', onError);
  else client.on('ready', onReady);
  schedule();

  return {
    get state() {
      return state;
    },
    heartbeat() {
      if (state === 'up') void check();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      settleLost();
      client.off('error', onError);
      client.off('reconnecting', onClose);
      client.off('node error', onError);
      client.off('ready', onReady);
    },
  };
}
