// One message is one hash field: a short header, then the body. Lua reads the
// header (attempts, backoff) with one pattern when a message fails; see lua/lib.lua.
//   <enqueuedAt base36>|<priority>|<maxAttempts>|<f|e><backoffMs>[-<capMs>]|[tags]<kind><body>
// kind: s string, j JSON, b bytes, r a raw member (no body stored: the body is its id),
// x a stub: the record is in a key of its own (see spill.ts).
// tags (format 2, see format.ts), each `<letter><byte length>:<bytes>`, only when present, so
// an unnamed message costs not one byte more than in format 1:
//   n the job's name; p the schedule occurrence it is, `<at ms>:<schedule id>` (made in Lua);
//   (format 8, flows: lua/flow-lib.lua) f a flow child's parent, `<group>:<o|m>:<parent id>`
//   (o: optional); c a flow parent, the number of its children.
// Records written before tags existed have none and read the same.
import { isUtf8 } from 'node:buffer';
import { errors } from '../base/errors.js';

/** A value JSON can carry: what a body or a result may be, besides a Buffer. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };
/** A body is a string (stored as is), bytes (a Buffer or Uint8Array), or any JSON value. */
export type Body = JsonValue | Buffer;

/** How long a failed delivery waits before the next: always `delay`, or doubling from it. */
export interface Backoff {
  /** fixed: the same wait each time; exponential: doubled for each further attempt */
  type: 'fixed' | 'exponential';
  /** ms before the first retry; exponential doubles it for each further one */
  delay: number;
  /** longest wait between attempts, in ms (default 1 hour) */
  max?: number;
}

export const DEFAULT_BACKOFF_MAX_MS = 3_600_000;

export interface RecordFields {
  enqueuedAt: number | null;
  priority: number;
  maxAttempts: number;
  backoff: Backoff;
}

/** Which schedule occurrence a message is (see src/queue/schedules/). */
export interface ScheduleTag {
  /** the schedule's id */
  id: string;
  /** the occurrence's grid time, epoch ms */
  at: number;
}

/** A flow child's parent (queue.flows): where it waits, and whether this child is optional. */
export interface FlowParent {
  /** the parent's id */
  id: string;
  /** the parent's group */
  group: number;
  /** an optional child: its death does not make the parent dead */
  optional: boolean;
}

/** What a record may carry beside its header: absent for most messages. */
export interface RecordTags {
  name?: string | undefined;
  schedule?: ScheduleTag | undefined;
  /** a flow child: its parent */
  parent?: FlowParent | undefined;
  /** a flow parent: how many children it has */
  childCount?: number | undefined;
}

export interface DecodedRecord extends RecordFields {
  body: Body;
  name: string | undefined;
  schedule: ScheduleTag | undefined;
  parent: FlowParent | undefined;
  childCount: number | undefined;
}

/** A body ready to store: its kind letter and its text or bytes. */
export interface StoredBody {
  kind: 's' | 'j' | 'b';
  data: string | Buffer;
  bytes: number;
}

/** Checks and encodes a body; throws a body error naming `field` when it cannot be stored. */
export function serialiseBody(body: unknown, field = 'body'): StoredBody {
  if (typeof body === 'string') return { kind: 's', data: body, bytes: Buffer.byteLength(body) };
  if (body instanceof Uint8Array) {
    const data = Buffer.isBuffer(body)
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.length);
    return { kind: 'b', data, bytes: data.length };
  }
  if (body === undefined || typeof body === 'function' || typeof body === 'symbol') {
    throw errors.body(field, `must be a string, bytes or a JSON value, not ${typeof body}`);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (cause) {
    throw errors.body(field, `cannot be serialised to JSON: ${(cause as Error).message}`, cause);
  }
  if (json === undefined) throw errors.body(field, 'cannot be serialised to JSON');
  return { kind: 'j', data: json, bytes: Buffer.byteLength(json) };
}

export function headerOf(fields: RecordFields): string {
  const enq = fields.enqueuedAt === null ? '' : fields.enqueuedAt.toString(36);
  const { type, delay, max = DEFAULT_BACKOFF_MAX_MS } = fields.backoff;
  const cap = max === DEFAULT_BACKOFF_MAX_MS ? '' : `-${max}`;
  return `${enq}|${fields.priority}|${fields.maxAttempts}|${type === 'fixed' ? 'f' : 'e'}${delay}${cap}|`;
}

/** Tags as they follow the header: '' for a message with none (see the format above). */
export function tagsOf(tags: RecordTags): string {
  let out = '';
  if (tags.name !== undefined) out += `n${Buffer.byteLength(tags.name)}:${tags.name}`;
  if (tags.schedule !== undefined) {
    const value = `${tags.schedule.at}:${tags.schedule.id}`;
    out += `p${Buffer.byteLength(value)}:${value}`;
  }
  if (tags.parent !== undefined) {
    const value = parentRef(tags.parent);
    out += `f${Buffer.byteLength(value)}:${value}`;
  }
  if (tags.childCount !== undefined) {
    const value = String(tags.childCount);
    out += `c${value.length}:${value}`;
  }
  return out;
}

/** A flow child's parent as lua/flow-lib.lua names it: `<group>:<o|m>:<parent id>`. */
export function parentRef(parent: FlowParent): string {
  return `${parent.group}:${parent.optional ? 'o' : 'm'}:${parent.id}`;
}

/** The parent a ref names; undefined when it does not parse. */
export function parseParentRef(ref: string): FlowParent | undefined {
  const match = /^(\d+):([om]):(.+)$/s.exec(ref);
  if (!match) return undefined;
  return { id: match[3] as string, group: Number(match[1]), optional: match[2] === 'o' };
}

/** The stored record: header, kind letter, body. Bytes stay bytes (ioredis sends Buffers as is). */
export function recordOf(header: string, body: StoredBody): string | Buffer {
  if (typeof body.data === 'string') return `${header}${body.kind}${body.data}`;
  return Buffer.concat([Buffer.from(`${header}${body.kind}`), body.data]);
}

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
