// Noticing that Redis lost skyq's data. Each group's slot keeps a random dataset tag
// (`{<prefix>:<g>}:dataset`, made by whoever finds none). A server that restarts empty, is
// flushed or is replaced by a backup comes back without the tag this process saw, or with
// another one: its messages are gone, and nothing else would say so (the actors only see their
// connection come back, then stale leases). A server brought back from an older backup (or a
// replica promoted before it had everything) keeps the tag, since the tag is older than the
// backup; what goes back then are the group's counters, which only ever grow: the id counter
// (`seq`, raised by every add with generated ids), the lease-token counter (`tok`, by every
// claim) and the last id of the event stream (`fin`, by every job that ended). The launcher's
// and the dashboard's server checks read the tags on every check (at start, after each
// reconnect, every 30 s, and the tags alone every 5 s) with the groups' depths, so a loss can
// be told with what the server held at the last reading before it.
import { randomBytes } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import type { Redis } from 'ioredis';
import { type KeyName, keyOf } from '../base/keys.js';
import { isCluster, type RedisClient } from '../redis/connection.js';
import { serverName } from '../redis/servers.js';

/** The key of a group's dataset tag: in the group's slot, beside its other keys. */
export const datasetKey = (prefix: string, group: number): string => `{${prefix}:${group}}:dataset`;

/** What some groups held: messages waiting, due, leased and dead. */
export interface Depths {
  /** waiting for their due time */
  delayed: number;
  /** due, waiting for a consumer */
  ready: number;
  /** leased */
  active: number;
  /** dead letters */
  dead: number;
}

/** A server that came back without the data it had. */
export interface DataLoss {
  /** host:port */
  server: string;
  /** the groups whose tag was gone or changed */
  groups: number[];
  /** when it was noticed (ms) */
  at: number;
  /** how long the server was away, as this process saw it (null: it never saw it go) */
  awayMs: number | null;
  /**
   * true when every group kept its tag but its counters went back: an older backup or a
   * lagging replica, so only what changed since it was taken is gone
   */
  older?: boolean;
  /** what those groups held at the last reading before (null: never read) */
  before:
    | (Depths & {
        /** when it was read (ms) */
        at: number;
      })
    | null;
}

/** What only grows while Redis keeps its data: see the top of this file. */
interface Marks {
  seq: number;
  tok: number;
  /** the event stream's last id, [ms, seq] ([0, 0]: none) */
  fin: [number, number];
}

interface Seen {
  tag: string;
  marks: Marks;
  depths: Depths;
  at: number;
}

/** True when a counter is lower now than it was: the data went back to an older copy. */
function wentBack(before: Marks, now: Marks): boolean {
  const [ms0, n0] = before.fin;
  const [ms1, n1] = now.fin;
  return now.seq < before.seq || now.tok < before.tok || ms1 < ms0 || (ms1 === ms0 && n1 < n0);
}

const count = (reply: unknown): number => Number(reply ?? 0) || 0;

/** The stream id of XREVRANGE's one entry, as [ms, seq]; [0, 0] when the stream is empty. */
function lastEntry(reply: unknown): [number, number] {
  const id = Array.isArray(reply) && Array.isArray(reply[0]) ? String(reply[0][0]) : '0-0';
  const [ms, n] = id.split('-');
  return [Number(ms) || 0, Number(n) || 0];
}

const ZERO: Depths = { delayed: 0, ready: 0, active: 0, dead: 0 };

export class DatasetTags {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #groups: number[];
  readonly #seen = new Map<number, Seen>();
  /** per server: since when its connection has been away (ms), until a reading succeeds */
  readonly #awaySince = new Map<string, number>();
  #last: Promise<unknown> = Promise.resolve();

  constructor(client: RedisClient, prefix: string, groups: number[]) {
    this.#client = client;
    this.#prefix = prefix;
    this.#groups = groups;
  }

  /** A server's connection went away now (the first time counts until it is read again). */
  away(server: string): void {
    if (!this.#awaySince.has(server)) this.#awaySince.set(server, Date.now());
  }

  /**
   * Reads every group's tag and depths; makes a tag where there is none. Returns one loss per
   * server whose groups lost the tag this process had seen (an empty list when none did).
   */
  check(): Promise<DataLoss[]> {
    // One at a time: an older reading judged after a newer one would call the old tag a change.
    const next = this.#last.then(() => this.#check());
    this.#last = next.catch(() => []);
    return next;
  }

  async #check(): Promise<DataLoss[]> {
    const readings = await Promise.all(this.#groups.map((g) => this.#read(g)));
    const lost = new Map<
      string,
      { groups: number[]; older: boolean; before: Depths & { at: number } }
    >();
    const now = Date.now();
    const read = new Set<string>();
    for (const reading of readings) {
      if (!reading) continue;
      const { group, server, tag, marks, depths } = reading;
      const seen = this.#seen.get(group);
      this.#seen.set(group, { tag, marks, depths, at: now });
      read.add(server);
      if (!seen) continue;
      const older = seen.tag === tag;
      if (older && !wentBack(seen.marks, marks)) continue;
      const loss = lost.get(server) ?? {
        groups: [],
        older: true,
        before: { ...ZERO, at: seen.at },
      };
      loss.groups.push(group);
      loss.older &&= older;
      for (const key of Object.keys(ZERO) as (keyof Depths)[]) loss.before[key] += seen.depths[key];
      loss.before.at = Math.min(loss.before.at, seen.at);
      lost.set(server, loss);
    }
    const losses = [...lost].map(([server, { groups, older, before }]) => {
      const since = this.#awaySince.get(server);
      const awayMs = since === undefined ? null : now - since;
      return { server, groups, at: now, awayMs, before, ...(older ? { older } : {}) };
    });
    for (const server of read) this.#awaySince.delete(server);
    return losses;
  }

  /** One group's tag (made when missing) and depths; null when its server cannot be read. */
  async #read(group: number) {
    const node = this.#nodeOf(group);
    if (!node) return null;
    const key = (name: KeyName) => keyOf(this.#prefix, group, name);
    const tagKey = datasetKey(this.#prefix, group);
    try {
      const fresh = randomBytes(8).toString('base64url');
      // SET NX GET: the tag there, or ours when there was none, in one command.
      const replies = (await node
        .multi()
        .set(tagKey, fresh, 'NX', 'GET')
        .zcard(key('delayed'))
        .zcard(key('ready'))
        .zcount(key('active'), '-inf', '(+inf') // the placeholder at +inf is no lease
        .zcard(key('dead'))
        .get(key('seq'))
        .get(key('tok'))
        .xrevrange(key('fin'), '+', '-', 'COUNT', 1)
        .exec()) as [Error | null, unknown][];
      // A reply that failed (a key of another type) judges nothing: read as 0, it would be a loss.
      if (replies.some(([error]) => error)) return null;
      const [before, delayed, ready, active, dead, seq, tok, fin] = replies.map(
        ([, value]) => value,
      );
      return {
        group,
        server: serverName(node),
        tag: (before as string | null) ?? fresh,
        marks: { seq: count(seq), tok: count(tok), fin: lastEntry(fin) },
        depths: {
          delayed: count(delayed),
          ready: count(ready),
          active: count(active),
          dead: count(dead),
        },
      };
    } catch {
      return null; // away: the next check (after the reconnect) reads it
    }
  }

  /** The server holding a group's slot (the client itself when standalone). */
  #nodeOf(group: number): Redis | null {
    const client = this.#client;
    if (!isCluster(client)) return client;
    const owner = client.slots[calculateSlot(keyOf(this.#prefix, group, 'delayed'))]?.[0];
    const [node] = client
      .nodes('master')
      .filter((n) => `${n.options.host}:${n.options.port}` === owner);
    return node ?? null;
  }
}

/** The one line a loss is told in: the server, how long it was away, what it held. */
export function describeLoss(loss: DataLoss, prefix: string): string {
  const away = loss.awayMs === null ? '' : ` after being away ${(loss.awayMs / 1000).toFixed(1)} s`;
  const b = loss.before;
  const groups = `its groups ${loss.groups.join(',')}`;
  const held = b
    ? `; at the last reading (${new Date(b.at).toISOString()}) ${groups} held ${b.delayed} delayed, ${b.ready} ready, ${b.active} leased and ${b.dead} dead messages`
    : '';
  const see = 'see "Redis lost its data" in docs/OPERATIONS.md';
  if (loss.older)
    return `Redis at ${loss.server} came back with older data than skyq had written (prefix ${prefix}: an older backup or a replica that lagged)${away}${held}; what ${groups} took since that copy was made is gone: ${see}`;
  return `Redis at ${loss.server} came back without skyq's data (prefix ${prefix})${away}${held}${b ? ', now gone' : ''}: ${see}`;
}
