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
// Records written before tags existed have none and read the same. record-read.ts reads them.
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
