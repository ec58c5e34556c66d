// One event of a group's stream, as lua/events.lua writes it: an entry per call and type,
//   EVENT_MARK → type, META_MARK → meta, then id → name pairs,
// and entries of format 4 (before events), id → done | dead pairs, which waitFor still reads.
import { errors } from '../../base/errors.js';
import { FORMAT_VERSION } from '../../base/format-version.js';
import { textOf } from '../record-read.js';

/** The kinds of events `queue.events()` hands out. */
export const EVENT_TYPES = [
  'added',
  'started',
  'done',
  'failed',
  'dead',
  'cancelled',
  'rescheduled',
  'stale',
  'progress',
] as const;
/** One of EVENT_TYPES. */
export type EventType = (typeof EVENT_TYPES)[number];

/** One event of `queue.events()`: what happened to which job, when, and where to read on from. */
export interface QueueEvent {
  /** what happened */
  type: EventType;
  /** the job's id */
  id: string;
  /** the job's group */
  group: number;
  /** the job's name, when it has one (stale events never know it: nothing reads the record) */
  name: string | undefined;
  /** when it happened, epoch ms on Redis's clock (the stream entry's time) */
  at: number;
  /** pass as `from` to read on after this event (covers every group this reader reads) */
  cursor: string;
  /** failed: when the next attempt is due; rescheduled: the new due time (epoch ms) */
  dueAt?: number;
  /** failed: attempts failed so far */
  attempts?: number;
  /** failed: the error */
  error?: string;
  /** dead: why; stale: 'lease expired' */
  reason?: string;
  /** progress: the value its handler reported (ctx.progress) */
  progress?: unknown;
}

/** An event before its cursor is known (the reader adds it when it hands the event out). */
export type RawEvent = Omit<QueueEvent, 'cursor'>;

const EVENT_MARK = Buffer.from('\xffe', 'latin1');
const KNOWN = new Set<string>(EVENT_TYPES);

/** The ms part of a stream entry id ("<ms>-<seq>"). */
export const entryTime = (entryId: string): number => Number(entryId.split('-')[0]);

/**
 * The events of one stream entry, in order. An entry of a newer format (format 8 on, its mark
 * carries the writer's format: `\xffe<format>`) throws ERR_SKYQ_FORMAT rather than be misread.
 */
export function eventsOf(
  group: number,
  entryId: string,
  fields: Buffer[],
  stream = `group ${group}'s events`,
): RawEvent[] {
  const at = entryTime(entryId);
  const out: RawEvent[] = [];
  const mark = fields[0];
  if (mark && mark.length > EVENT_MARK.length && mark.subarray(0, 2).equals(EVENT_MARK)) {
    const format = Number(mark.subarray(2).toString('latin1'));
    throw errors.formatTooNew(
      stream,
      Number.isInteger(format) ? format : FORMAT_VERSION + 1,
      FORMAT_VERSION,
    );
  }
  if (fields.length >= 4 && (fields[0] as Buffer).equals(EVENT_MARK)) {
    const type = String(fields[1]);
    if (!KNOWN.has(type)) return out; // a type from a newer skyq: not ours to guess at
    const meta = String(fields[3]);
    const values = type === 'progress' ? progressValues(meta) : [];
    for (let i = 4; i + 1 < fields.length; i += 2) {
      const name = String(fields[i + 1]);
      const event: RawEvent = {
        type: type as EventType,
        id: textOf(fields[i] as Buffer),
        group,
        name: name === '' ? undefined : name,
        at,
      };
      if (type === 'progress') event.progress = values[(i - 4) / 2];
      else addMeta(event, meta);
      out.push(event);
    }
    return out;
  }
  // Format 4: id → done | dead.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const type = String(fields[i + 1]);
    if (type !== 'done' && type !== 'dead') continue;
    out.push({ type, id: textOf(fields[i] as Buffer), group, name: undefined, at });
  }
  return out;
}

/** A progress entry's values: one JSON array, in the order of its ids (lua/report.lua). */
function progressValues(meta: string): unknown[] {
  try {
    const values: unknown = JSON.parse(meta);
    return Array.isArray(values) ? values : [];
  } catch {
    return [];
  }
}

function addMeta(event: RawEvent, meta: string): void {
  switch (event.type) {
    case 'failed': {
      const first = meta.indexOf('|');
      const second = meta.indexOf('|', first + 1);
      event.dueAt = Number(meta.slice(0, first));
      event.attempts = Number(meta.slice(first + 1, second));
      event.error = meta.slice(second + 1);
      break;
    }
    case 'rescheduled':
      event.dueAt = Number(meta);
      break;
    case 'dead':
    case 'stale':
      event.reason = meta;
      break;
    default:
  }
}
