// events({ follow: false }): what the groups' streams keep after each group's position, merged
// by time (a k-way merge of the streams, each already in time order), then the end. Each group
// is read by XRANGE a chunk at a time, so the reader holds at most a chunk per group, and an
// event is handed out only once every group that has more has shown something as late.
import type { RedisClient } from '../../redis/connection.js';
import type { Positions } from './cursor.js';
import { eventsOf, type RawEvent } from './event.js';

/** Entries one XRANGE reads of a group's stream (each holds at most 100 events). */
const ENTRIES_PER_READ = 50;

interface Lane {
  group: number;
  /** entries read and not handed out yet, oldest first */
  entries: { entryId: string; fields: Buffer[] }[];
  /** events of the first entry already handed out (a reader that stopped inside it) */
  skip: number;
  /** the stream had nothing after the last entry read */
  ended: boolean;
}

/** Stream entry ids in time order: milliseconds, then sequence. */
export function compareEntryIds(a: string, b: string): number {
  const [ams, aseq] = a.split('-').map(Number) as [number, number];
  const [bms, bseq] = b.split('-').map(Number) as [number, number];
  return ams - bms || aseq - bseq;
}

/**
 * Yields each event with how many of its entry's events are handed out with it (null: all of
 * them, the entry is done) and its entry id; `positions` says where each group starts.
 */
export async function* mergedEvents(
  client: RedisClient,
  streamOf: (group: number) => string,
  groups: number[],
  positions: Positions,
  stopped: () => boolean,
): AsyncGenerator<{ event: RawEvent; seen: number | null; entry: string }> {
  const lanes: Lane[] = groups.map((group) => ({ group, entries: [], skip: 0, ended: false }));
  // A reader that stopped inside an entry starts with the rest of that entry.
  for (const lane of lanes) {
    const position = positions.get(lane.group);
    if (!position || position.seen === null) continue;
    const found = (await client.xrangeBuffer(
      streamOf(lane.group),
      position.entry,
      position.entry,
    )) as [Buffer, Buffer[]][];
    if (found[0]) lane.entries.push({ entryId: position.entry, fields: found[0][1] });
    lane.skip = position.seen;
  }
  const refill = async (lane: Lane) => {
    const after = lane.entries.at(-1)?.entryId ?? positions.get(lane.group)?.entry ?? '0-0';
    const read = (await client.xrangeBuffer(
      streamOf(lane.group),
      `(${after}`,
      '+',
      'COUNT',
      ENTRIES_PER_READ,
    )) as [Buffer, Buffer[]][];
    for (const [id, fields] of read) lane.entries.push({ entryId: id.toString('latin1'), fields });
    if (read.length < ENTRIES_PER_READ) lane.ended = true;
  };
  while (!stopped()) {
    for (const lane of lanes) if (lane.entries.length === 0 && !lane.ended) await refill(lane);
    let next: Lane | undefined;
    for (const lane of lanes) {
      const head = lane.entries[0];
      const first = next?.entries[0];
      if (head && (!first || compareEntryIds(head.entryId, first.entryId) < 0)) next = lane;
    }
    if (!next) return;
    const { entryId, fields } = next.entries.shift() as Lane['entries'][0];
    const events = eventsOf(next.group, entryId, fields);
    if (events.length === 0) positions.set(next.group, { entry: entryId, seen: null });
    for (let i = next.skip; i < events.length; i++) {
      const seen = i + 1 === events.length ? null : i + 1;
      yield { event: events[i] as RawEvent, seen, entry: entryId };
    }
    next.skip = 0;
  }
}
