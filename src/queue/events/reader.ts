// queue.events(): the groups' event streams ({prefix:g}:fin, lua/events.lua) as one async
// iterable. Without follow, what the streams keep is merged by time (merged.ts) and the
// iteration ends. Following, a standalone server is read by one connection with one XREAD over
// every group's stream; on a cluster (where one XREAD may name only one slot) by one connection
// per group.
// A reader reads a batch only once the one before is handed out, so it holds at most a batch
// per connection, and each event it hands out carries the cursor that resumes after it.
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../../base/errors.js';
import { keyOf } from '../../base/keys.js';
import { blockingCopy, isCluster, type RedisClient } from '../../redis/connection.js';
import { explainRedisError } from '../../redis/explain.js';
import { isConnectionLoss } from '../../redis/failure.js';
import { checkGroup, checkObject, rejectUnknown } from '../options.js';
import { type EventsFrom, formatCursor, type Positions, parseFrom } from './cursor.js';
import { eventsOf, type QueueEvent, type RawEvent } from './event.js';
import { compareEntryIds, mergedEvents } from './merged.js';

/** What `queue.events(options)` reads: which groups, from where, and whether it waits for more. */
export interface EventsOptions {
  /** the groups to read (default: all) */
  groups?: number[];
  /** 'now' (default): what happens from now on; 'start': all the streams keep; or a cursor */
  from?: EventsFrom;
  /** wait for more once caught up (default true); false ends when caught up, in time order */
  follow?: boolean;
  /** ends the iteration (also while it waits for events) */
  signal?: AbortSignal;
}

/** How long one XREAD blocks before it looks whether the reader was stopped. */
const BLOCK_MS = 5000;
/** Entries one XREAD returns per stream (each holds at most 100 events). */
const ENTRIES_PER_READ = 50;

type Entries = [Buffer, [Buffer, Buffer[]][]][];
interface Batch {
  entries: { group: number; entryId: string; fields: Buffer[] }[];
  taken: () => void;
}

export function readEvents(
  client: RedisClient,
  prefix: string,
  groupCount: number,
  options: EventsOptions = {},
  closing?: AbortSignal,
): AsyncIterable<QueueEvent> {
  const { groups, from, follow = true, signal, ...rest } = checkObject('options', options);
  rejectUnknown('', rest);
  if (groups !== undefined && (!Array.isArray(groups) || groups.length === 0)) {
    throw errors.invalidOption('groups', 'must be a non-empty array of group numbers', groups);
  }
  const read =
    (groups as unknown[] | undefined)?.map((g) => checkGroup('groups[]', g, groupCount)) ??
    Array.from({ length: groupCount }, (_, g) => g);
  if (typeof follow !== 'boolean')
    throw errors.invalidOption('follow', 'must be true or false', follow);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw errors.invalidOption('signal', 'must be an AbortSignal', signal);
  const start = parseFrom(from, read);
  const unique = [...new Set(read)];
  // 'now' is when events() was called: every group's last entry read at once, from here.
  const latest = start.others === 'now' ? lastEntries(client, prefix, unique) : null;
  latest?.catch(() => undefined); // a failure shows when the iteration awaits it
  return {
    [Symbol.asyncIterator]: () =>
      explained(
        follow$(client, prefix, unique, start, latest, follow as boolean, [
          signal as AbortSignal | undefined,
          closing,
        ]),
        (error) => explainRedisError(error, prefix, client),
      ),
  };
}

/**
 * The events, with what a read throws explained as every other call's error is (a lost
 * connection: ERR_SKYQ_UNREACHABLE naming the server, not ioredis's own words). Inside, the
 * raw error is kept: a follower tells a lost connection by it and reads again.
 */
async function* explained(
  events: AsyncGenerator<QueueEvent>,
  explain: (error: unknown) => unknown,
): AsyncGenerator<QueueEvent> {
  try {
    yield* events;
  } catch (error) {
    throw explain(error);
  }
}

/**
 * Each group's last entry now ('0-0' for an empty stream), read in one atomic call on a
 * standalone server (MULTI) and all at once on a cluster: one after the other, an event written
 * meanwhile in a group not read yet was skipped.
 */
async function lastEntries(
  client: RedisClient,
  prefix: string,
  groups: number[],
): Promise<Map<number, string>> {
  const stream = (group: number) => keyOf(prefix, group, 'fin');
  const idOf = (reply: unknown) => (reply as [string, unknown][])[0]?.[0] ?? '0-0';
  let replies: unknown[];
  if (isCluster(client)) {
    replies = await Promise.all(
      groups.map((g) => client.xrevrange(stream(g), '+', '-', 'COUNT', 1)),
    );
  } else {
    const multi = client.multi();
    for (const group of groups) multi.xrevrange(stream(group), '+', '-', 'COUNT', 1);
    const results = (await multi.exec()) ?? [];
    replies = results.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    });
  }
  return new Map(groups.map((group, i) => [group, idOf(replies[i])]));
}

/**
 * Each group's last entry when events() was called. A follower that could not read them (Redis
 * away at that moment) reads them again until it can, as it reads on through any later outage:
 * it then follows from when Redis answered. Reading once (follow: false), the failure is the
 * caller's.
 */
async function firstPositions(
  latest: Promise<Map<number, string>>,
  follow: boolean,
  readAgain: () => Promise<Map<number, string>>,
  signals: AbortSignal[],
): Promise<Map<number, string> | null> {
  let reading = latest;
  for (let failures = 1; ; failures++) {
    try {
      return await reading;
    } catch (error) {
      if (!follow || !isConnectionLoss(error)) throw error;
      await sleep(Math.min(1000, 100 * failures));
      if (signals.some((end) => end.aborted)) return null;
      reading = readAgain();
    }
  }
}

async function* follow$(
  client: RedisClient,
  prefix: string,
  groups: number[],
  start: ReturnType<typeof parseFrom>,
  latest: Promise<Map<number, string>> | null,
  follow: boolean,
  ends: (AbortSignal | undefined)[],
): AsyncGenerator<QueueEvent> {
  const signals = ends.filter((end): end is AbortSignal => end !== undefined);
  if (signals.some((end) => end.aborted)) return;
  const positions: Positions = start.positions;
  const streamOf = (group: number) => keyOf(prefix, group, 'fin');
  const handOut = (event: RawEvent, seen: number | null, entry: string): QueueEvent => {
    positions.set(event.group, { entry, seen });
    return { ...event, cursor: formatCursor(positions) };
  };
  // Where each group starts: as `from` says, else at its last entry when events() was called
  // (or the beginning).
  const now = latest
    ? await firstPositions(latest, follow, () => lastEntries(client, prefix, groups), signals)
    : null;
  if (signals.some((end) => end.aborted)) return;
  for (const group of groups) {
    if (positions.has(group)) continue;
    positions.set(group, { entry: now?.get(group) ?? '0-0', seen: null });
  }
  if (!follow) {
    const stopped = () => signals.some((end) => end.aborted);
    for await (const { event, seen, entry } of mergedEvents(
      client,
      streamOf,
      groups,
      positions,
      stopped,
    )) {
      yield handOut(event, seen, entry);
    }
    return;
  }
  // A reader stopped inside an entry: the rest of that entry first.
  for (const group of groups) {
    const position = positions.get(group);
    if (!position || position.seen === null) continue;
    const { entry, seen } = position;
    const found = (await client.xrangeBuffer(streamOf(group), entry, entry)) as [
      Buffer,
      Buffer[],
    ][];
    const events = found[0] ? eventsOf(group, entry, found[0][1]) : [];
    for (let i = seen; i < events.length; i++) {
      yield handOut(events[i] as RawEvent, i + 1 === events.length ? null : i + 1, entry);
    }
    positions.set(group, { entry, seen: null });
  }

  const lanes = isCluster(client) ? groups.map((g) => [g]) : [groups];
  const inbox: Batch[] = [];
  let wakeUp: (() => void) | undefined;
  const deliver = (item: Batch) => {
    inbox.push(item);
    wakeUp?.();
  };
  let stopped = false;
  const connections: RedisClient[] = [];
  const laneLoop = async (lane: number[]) => {
    const connection = blockingCopy(client);
    connection.on('error', () => {}); // each failed read is seen below, and tried again
    connections.push(connection);
    let failures = 0;
    while (!stopped) {
      try {
        const ids = lane.map((g) => (positions.get(g) as { entry: string }).entry);
        const xread = connection.xreadBuffer.bind(connection) as unknown as (
          ...args: (string | number)[]
        ) => Promise<unknown>;
        const reply = (await xread(
          'BLOCK',
          BLOCK_MS,
          'COUNT',
          ENTRIES_PER_READ,
          'STREAMS',
          ...lane.map(streamOf),
          ...ids,
        )) as Entries | null;
        failures = 0;
        if (!reply) continue;
        const entries: Batch['entries'] = [];
        for (const [key, list] of reply) {
          const group = lane.find((g) => streamOf(g) === key.toString('latin1')) as number;
          for (const [id, fields] of list) {
            entries.push({ group, entryId: id.toString('latin1'), fields });
          }
        }
        // One reply over several groups: hand its entries out in time order.
        entries.sort((a, b) => compareEntryIds(a.entryId, b.entryId));
        await new Promise<void>((taken) => deliver({ entries, taken }));
      } catch {
        if (stopped) return;
        // A lost connection is tried again from where the reader stands.
        failures += 1;
        await sleep(Math.min(1000, 100 * failures));
      }
    }
  };
  const onAbort = () => {
    stopped = true;
    for (const connection of connections) connection.disconnect();
    wakeUp?.();
  };
  for (const end of signals) end.addEventListener('abort', onAbort);
  try {
    for (const lane of lanes) void laneLoop(lane);
    while (!stopped) {
      const item = inbox.shift();
      if (!item) {
        await new Promise<void>((resolve) => {
          wakeUp = resolve;
        });
        wakeUp = undefined;
        continue;
      }
      for (const { group, entryId, fields } of item.entries) {
        const events = eventsOf(group, entryId, fields);
        if (events.length === 0) positions.set(group, { entry: entryId, seen: null });
        for (let i = 0; i < events.length; i++) {
          yield handOut(events[i] as RawEvent, i + 1 === events.length ? null : i + 1, entryId);
        }
      }
      item.taken();
    }
  } finally {
    for (const end of signals) end.removeEventListener('abort', onAbort);
    stopped = true;
    for (const connection of connections) connection.disconnect();
  }
}
