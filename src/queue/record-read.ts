// Reading a record as Redis returns it (the claim's hot path, byte by byte): its header, its
// tags and its body. The format is written down in record.ts, which makes records.
import { isUtf8 } from 'node:buffer';
import { errors } from '../base/errors.js';
import {
  type Backoff,
  type Body,
  DEFAULT_BACKOFF_MAX_MS,
  type DecodedRecord,
  type FlowParent,
  parseParentRef,
  type ScheduleTag,
} from './record.js';

const BAR = 0x7c; // '|'
const DASH = 0x2d; // '-'
const COLON = 0x3a; // ':'
const NAME_TAG = 0x6e; // 'n'
const SCHEDULE_TAG = 0x70; // 'p'
const PARENT_TAG = 0x66; // 'f'
const CHILDREN_TAG = 0x63; // 'c'

/** A record's tags and where its kind letter is, read from the byte after the last bar. */
export interface TagsAt {
  name: string | undefined;
  schedule: ScheduleTag | undefined;
  parent: FlowParent | undefined;
  childCount: number | undefined;
  /** the kind letter's index; -1 when a tag does not parse */
  kindAt: number;
}

const isTag = (byte: number | undefined) =>
  byte === NAME_TAG || byte === SCHEDULE_TAG || byte === PARENT_TAG || byte === CHILDREN_TAG;

export function readTags(record: Buffer, afterLastBar: number): TagsAt {
  const out: TagsAt = {
    name: undefined,
    schedule: undefined,
    parent: undefined,
    childCount: undefined,
    kindAt: afterLastBar,
  };
  let at = afterLastBar;
  while (isTag(record[at])) {
    const colon = record.indexOf(COLON, at + 1);
    const length = colon > at + 1 && colon < at + 6 ? numberAt(record, at + 1, colon, 10) : -1;
    if (length < 0 || colon + 1 + length > record.length) return { ...out, kindAt: -1 };
    const value = record.toString('utf8', colon + 1, colon + 1 + length);
    const tag = record[at];
    if (tag === NAME_TAG) out.name = value;
    else if (tag === PARENT_TAG) {
      out.parent = parseParentRef(value);
      if (!out.parent) return { ...out, kindAt: -1 };
    } else if (tag === CHILDREN_TAG) {
      out.childCount = Number(value);
      if (!Number.isInteger(out.childCount)) return { ...out, kindAt: -1 };
    } else {
      const split = value.indexOf(':');
      const when = split > 0 ? Number(value.slice(0, split)) : Number.NaN;
      if (!Number.isFinite(when)) return { ...out, kindAt: -1 };
      out.schedule = { id: value.slice(split + 1), at: when };
    }
    at = colon + 1 + length;
  }
  out.kindAt = at;
  return out;
}

/**
 * Where the header's four bars are (fewer when it does not parse): the byte after the last is
 * the body's kind. A header is at most ~60 bytes, so only the first 64 are looked at.
 */
export function headerBars(record: Buffer): number[] {
  const bars: number[] = [];
  for (let i = 0; i < record.length && i < 64 && bars.length < 4; i++) {
    if (record[i] === BAR) bars.push(i);
  }
  return bars;
}

/** A header field's digits as a number (base 10 or 36); -1 when a byte is not a digit. */
function numberAt(record: Buffer, from: number, to: number, base: 10 | 36): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = record[i] as number;
    let d = c - 0x30; // '0'…'9'
    if (d < 0 || d > 9) d = base === 36 && c >= 0x61 && c <= 0x7a ? c - 0x57 : -1; // 'a'…'z'
    if (d < 0) return -1;
    n = n * base + d;
  }
  return n;
}

/**
 * Reads a record as Redis returned it, byte by byte (the claim's hot path: no regex, no copies
 * of the header). `id` is the message id's bytes: a raw member's body is its id (a string when
 * it is valid UTF-8, else the bytes).
 */
export function decodeRecord(id: Buffer, record: Buffer): DecodedRecord {
  const bars = headerBars(record);
  const found = bars.length;
  const [b1 = 0, b2 = 0, b3 = 0, b4 = 0] = bars;
  const kind = record[b3 + 1];
  const dash = record.indexOf(DASH, b3 + 2);
  const delayEnd = dash > 0 && dash < b4 ? dash : b4;
  const enqueuedAt = b1 === 0 ? null : numberAt(record, 0, b1, 36);
  const priority = numberAt(record, b1 + 1, b2, 10);
  const maxAttempts = numberAt(record, b2 + 1, b3, 10);
  const delay = numberAt(record, b3 + 2, delayEnd, 10);
  const max = delayEnd === b4 ? DEFAULT_BACKOFF_MAX_MS : numberAt(record, delayEnd + 1, b4, 10);
  if (
    found < 4 ||
    (kind !== 0x66 && kind !== 0x65) || // f, e
    enqueuedAt === -1 ||
    priority < 0 ||
    maxAttempts < 0 ||
    delay < 0 ||
    max < 0 ||
    b2 === b1 + 1 ||
    b3 === b2 + 1 ||
    delayEnd === b3 + 2
  ) {
    throw errors.malformedRecord(textOf(id), 'header does not parse');
  }
  const backoff: Backoff = { type: kind === 0x66 ? 'fixed' : 'exponential', delay, max };
  const tags = readTags(record, b4 + 1);
  if (tags.kindAt < 0) throw errors.malformedRecord(textOf(id), 'a tag does not parse');
  const { name, schedule, parent, childCount } = tags;
  const body = bodyOf(id, record, tags.kindAt);
  return {
    enqueuedAt,
    priority,
    maxAttempts,
    backoff,
    body,
    name,
    schedule,
    parent,
    childCount,
  };
}

function bodyOf(id: Buffer, record: Buffer, kindAt: number): Body {
  const start = kindAt + 1;
  switch (record[kindAt]) {
    case 0x73: // s
      return record.toString('utf8', start);
    case 0x6a: // j
      try {
        return JSON.parse(record.toString('utf8', start)) as Body;
      } catch (cause) {
        const problem = `body is not valid JSON (${(cause as Error).message})`;
        throw errors.malformedRecord(textOf(id), problem);
      }
    case 0x62: // b: a copy, so the body does not hold the whole reply in memory
      return Buffer.from(record.subarray(start));
    case 0x72: // r
      return isUtf8(id) ? id.toString('utf8') : Buffer.from(id);
    case 0x78: // x: a stub whose body key (spill.ts) could not be read
      throw errors.malformedRecord(
        textOf(id),
        `its body key (nonce ${record.toString('latin1', start)}) is gone`,
      );
    default:
      throw errors.malformedRecord(textOf(id), 'unknown body kind');
  }
}

/** An id as text: UTF-8 when it is valid UTF-8, else with the odd bytes as \xNN escapes. */
export function textOf(id: Buffer): string {
  if (isUtf8(id)) return id.toString('utf8');
  let out = '';
  for (const byte of id) out += byte < 0x80 ? String.fromCharCode(byte) : `\\x${byte.toString(16)}`;
  return out;
}
