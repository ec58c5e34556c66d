// What a launcher (or the stand-alone dashboard) checks on every Redis server it uses: the
// maxmemory-policy (an evicting one deletes queued messages), the server's clock against
// its own (due times are on Redis's clock), and whether it still holds skyq's data (the
// groups' dataset tags, dataset-tags.ts). Checked at start, again after every reconnect
// (a restarted or failed-over server may come back configured differently) and every
// `recheckMs`. Each finding is reported once per server, and again only when it changes.
import type { Redis } from 'ioredis';
import { errors, type SkyqError } from '../base/errors.js';
import { measureSkew } from '../redis/clock-skew.js';
import { isCluster, type RedisClient } from '../redis/connection.js';
import { canEvict, EVICTION_FIX, readEvictionPolicy } from '../redis/eviction.js';
import { serverName, serversOf } from '../redis/servers.js';
import { type DataLoss, DatasetTags, describeLoss } from './dataset-tags.js';

/** A clock difference beyond this is reported (and again when it moves by more). */
export const SKEW_LIMIT_MS = 1000;
const RECHECK_MS = 30_000;
/** How often the groups' dataset tags and depths are read (dataset-tags.ts). */
const TAGS_EVERY_MS = 5000;
/** After a cluster node's connection ended, how long before looking for it again. */
const NODE_BACK_MS = 1000;

/** What a launcher last found about one Redis server: eviction policy, clock, lost data. */
export interface ServerState {
  /** host:port */
  server: string;
  /** null when it could not be read (see policyUnreadable) */
  policy: string | null;
  /** the policy can delete skyq's keys */
  evicting: boolean;
  /** why the policy could not be read, when it could not */
  policyUnreadable?: string;
  /** the server's clock minus this process's, in ms (positive: the server is ahead) */
  skewMs: number | null;
  /** when it was last checked (epoch ms) */
  checkedAt: number;
  /** the last time it came back without skyq's data, as this process saw it */
  dataLost?: DataLoss;
  /** how many times this process saw it come back without skyq's data */
  dataLostTotal?: number;
}

export interface CheckNote {
  level: 'info' | 'warn' | 'error';
  event: 'eviction' | 'eviction-unknown' | 'clock-skew' | 'data-lost';
  server: string;
  line: string;
}

export interface ServerChecksOptions {
  /** an evicting policy is a loud warning instead of a refusal */
  allowEviction: boolean;
  report: (note: CheckNote) => void;
  /** the clock compared with each server's TIME (default Date.now; tests skew it) */
  wallClock?: () => number;
  recheckMs?: number;
  /** the groups whose dataset tags tell whether a server lost skyq's data */
  dataset?: { prefix: string; groups: number[] };
}

/** What was last said about a server, so each finding is said once. */
interface Said {
  policy?: string;
  unreadable?: boolean;
  skewMs?: number;
}

const seconds = (ms: number) => `${(Math.abs(ms) / 1000).toFixed(1)} s`;

export class ServerChecks {
  readonly #client: RedisClient;
  readonly #options: ServerChecksOptions;
  readonly #states = new Map<string, ServerState>();
  readonly #said = new Map<string, Said>();
  readonly #changed: ((states: ServerState[]) => void)[] = [];
  readonly #unhook: (() => void)[] = [];
  #running: Promise<ServerState[]> | null = null;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #tagTimer: NodeJS.Timeout | undefined;
  /** before watch(), an evicting policy is the caller's refusal, not a report */
  #watching = false;
  readonly #tags: DatasetTags | null;
  readonly #losses = new Map<string, { last: DataLoss; total: number }>();

  constructor(client: RedisClient, options: ServerChecksOptions) {
    this.#client = client;
    this.#options = options;
    const { dataset } = options;
    this.#tags = dataset ? new DatasetTags(client, dataset.prefix, dataset.groups) : null;
  }

  get states(): ServerState[] {
    return [...this.#states.values()];
  }

  /** Called with every server's state after each check. */
  onChange(listener: (states: ServerState[]) => void): void {
    this.#changed.push(listener);
  }

  /** Reads every server; a check asked for while one runs runs once more after it. */
  check(): Promise<ServerState[]> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#checkAll().finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        void this.check();
      }
    });
    return this.#running;
  }

  /** The error start must refuse with: a server whose policy evicts, unless allowed. */
  refusal(): SkyqError | null {
    if (this.#options.allowEviction) return null;
    const evicting = this.states.find((s) => s.evicting);
    return evicting ? errors.eviction(evicting.server, evicting.policy ?? '?', EVICTION_FIX) : null;
  }

  /** Checks again after every reconnect of any server, and every recheckMs. */
  watch(): void {
    this.#watching = true;
    for (const server of this.states) this.#judge(server);
    const recheck = () => void this.check();
    // biome-ignore lint/suspicious/noExplicitAny: an EventEmitter listener takes what it is given
    const hook = (emitter: Redis | RedisClient, event: string, fn: (...a: any[]) => void) => {
      emitter.on(event, fn);
      this.#unhook.push(() => emitter.off(event, fn));
    };
    const gone = (node: Redis) => () => this.#tags?.away(serverName(node));
    if (isCluster(this.#client)) {
      const cluster = this.#client;
      const watchNode = (node: Redis) => {
        hook(node, 'ready', recheck);
        hook(node, 'close', gone(node));
      };
      for (const node of cluster.nodes('all')) watchNode(node);
      hook(cluster, '+node', watchNode);
      // A cluster drops a node whose connection ended and makes a new, lazy one at the next
      // slot refresh: an idle checker would not see it come back, so it refreshes and checks.
      hook(cluster, '-node', () => {
        const timer = setTimeout(() => cluster.refreshSlotsCache(() => recheck()), NODE_BACK_MS);
        timer.unref();
      });
    } else {
      hook(this.#client, 'ready', recheck);
      hook(this.#client, 'close', gone(this.#client));
    }
    this.#timer = setInterval(recheck, this.#options.recheckMs ?? RECHECK_MS);
    this.#timer.unref();
    // The tags and depths more often: a loss is told with what the server held just before.
    if (this.#tags) {
      const tags = this.#tags;
      this.#tagTimer = setInterval(() => {
        void tags.check().then((losses) => {
          for (const loss of losses) this.#lost(loss);
          // Tell the listeners too (the coordinator publishes what `skyq stats` and the
          // stand-alone dashboard show): a loss without a reconnect (FLUSHALL) waited for the
          // next full check, up to 30 s, before they showed it.
          if (losses.length > 0) this.#tell();
        });
      }, TAGS_EVERY_MS);
      this.#tagTimer.unref();
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    clearInterval(this.#tagTimer);
    for (const unhook of this.#unhook.splice(0)) unhook();
  }

  async #checkAll(): Promise<ServerState[]> {
    try {
      const servers = await serversOf(this.#client);
      await Promise.all(
        servers.map(async ({ name, client }) => {
          try {
            const [reading, skewMs] = await Promise.all([
              readEvictionPolicy(client),
              measureSkew(client, this.#options.wallClock),
            ]);
            const policy = 'policy' in reading ? reading.policy : null;
            const state: ServerState = {
              server: name,
              policy,
              evicting: policy !== null && canEvict(policy),
              skewMs,
              checkedAt: Date.now(),
              ...('unreadable' in reading ? { policyUnreadable: reading.unreadable } : {}),
            };
            const loss = this.#losses.get(name);
            if (loss) Object.assign(state, { dataLost: loss.last, dataLostTotal: loss.total });
            this.#states.set(name, state);
            if (this.#watching) this.#judge(state);
          } catch {
            // Unreachable for now: the outage is reported elsewhere; a reconnect checks again.
          }
        }),
      );
    } catch {
      // No slot map yet (a cluster while it is down): the next reconnect checks again.
    }
    for (const loss of (await this.#tags?.check()) ?? []) this.#lost(loss);
    return this.#tell();
  }

  /** Gives every listener the servers' states. */
  #tell(): ServerState[] {
    const states = this.states;
    for (const listener of this.#changed) listener(states);
    return states;
  }

  /** A server came back without skyq's data: said once, kept in its state for every view. */
  #lost(loss: DataLoss): void {
    const total = (this.#losses.get(loss.server)?.total ?? 0) + 1;
    this.#losses.set(loss.server, { last: loss, total });
    const state = this.#states.get(loss.server);
    if (state) Object.assign(state, { dataLost: loss, dataLostTotal: total });
    const line = describeLoss(loss, this.#options.dataset?.prefix ?? '');
    this.#options.report({ level: 'error', event: 'data-lost', server: loss.server, line });
  }

  /** Reports what changed about one server since it was last reported. */
  #judge(state: ServerState): void {
    const said = this.#said.get(state.server) ?? {};
    this.#said.set(state.server, said);
    const report = (level: CheckNote['level'], event: CheckNote['event'], line: string) =>
      this.#options.report({ level, event, server: state.server, line });
    const { server, policy } = state;
    if (policy !== null && said.policy !== policy) {
      if (state.evicting) {
        const line = this.#options.allowEviction
          ? `Redis at ${server} has maxmemory-policy ${policy}: it deletes queued messages when memory is full, and --allow-eviction lets skyq run anyway; run ${EVICTION_FIX} to stop losing messages`
          : `Redis at ${server} has maxmemory-policy ${policy}, which deletes queued messages when memory is full: run ${EVICTION_FIX} there now`;
        report(this.#options.allowEviction ? 'warn' : 'error', 'eviction', line);
      } else if (said.policy !== undefined && canEvict(said.policy)) {
        report('info', 'eviction', `Redis at ${server} now has maxmemory-policy ${policy}`);
      }
      said.policy = policy;
    }
    if (policy === null && !said.unreadable) {
      said.unreadable = true;
      report(
        'warn',
        'eviction-unknown',
        `cannot read the maxmemory-policy of Redis at ${server} (${state.policyUnreadable}): make sure it is noeviction (${EVICTION_FIX}), or queued messages can be deleted`,
      );
    }
    const skew = state.skewMs;
    if (skew === null) return;
    if (Math.abs(skew) > SKEW_LIMIT_MS) {
      if (said.skewMs === undefined || Math.abs(skew - said.skewMs) > SKEW_LIMIT_MS) {
        said.skewMs = skew;
        const way = skew > 0 ? 'ahead of' : 'behind';
        const runs = skew > 0 ? 'early' : 'late';
        report(
          'warn',
          'clock-skew',
          `the clock of Redis at ${server} is ${seconds(skew)} ${way} this host's: delay and runAt are measured on Redis's clock, so its messages start ${seconds(skew)} ${runs} by this host's clock`,
        );
      }
    } else if (said.skewMs !== undefined) {
      said.skewMs = undefined;
      report(
        'info',
        'clock-skew',
        `the clock of Redis at ${server} is within 1 s of this host's again`,
      );
    }
  }
}

/** A launcher's way of saying a finding: its log, and a process warning (stderr) unless info. */
export function reportTo(
  logger: {
    [level in CheckNote['level']]: (fields: object, line: string) => void;
  },
): (note: CheckNote) => void {
  return (note) => {
    logger[note.level]({ event: note.event, server: note.server }, note.line);
    if (note.level === 'info') return;
    const code =
      note.event === 'clock-skew'
        ? 'SKYQ_CLOCK_SKEW'
        : note.event === 'data-lost'
          ? 'SKYQ_DATA_LOST'
          : 'SKYQ_EVICTION';
    process.emitWarning(`skyq: ${note.line}`, { code });
  };
}
