// One message is one hash field: a short header, then the body. Lua reads the
// header (attempts, backoff) with one pattern when a message fails; see lua/lib.lua.
//   <enqueuedAt base36>|<priority>|<maxAttempts>|<f|e><backoffMs>[-<capMs>]|<kind><body>
// kind: s string, j JSON, b bytes, r a raw member (no body stored: the body is its id).
import { isUtf8 } from 'node:buffer';
import { errors } from './errors.js';

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };
/** A body is a string (stored as is), bytes (a Buffer or Uint8Array), or any JSON value. */
export type Body = JsonValue | Buffer;

export interface Backoff {
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

export interface DecodedRecord extends RecordFields {
  body: Body;
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

/** The stored record: header, kind letter, body. Bytes stay bytes (ioredis sends Buffers as is). */
export function recordOf(header: string, body: StoredBody): string | Buffer {
  if (typeof body.data === 'string') return `${header}${body.kind}${body.data}`;
  return Buffer.concat([Buffer.from(`${header}${body.kind}`), body.data]);
}

const BAR = 0x7c; // '|'
const HEADER = /^([0-9a-z]*)\|(\d+)\|(\d+)\|([fe])(\d+)(?:-(\d+))?\|$/;

/**
 * Reads a record as Redis returned it. `id` is the message id's bytes: a raw member's body
 * is its id (a string when it is valid UTF-8, else the bytes).
 */
export function decodeRecord(id: Buffer, record: Buffer): DecodedRecord {
  let end = -1;
  for (let i = 0, bars = 0; i < record.length && i < 64; i++) {
    if (record[i] === BAR && ++bars === 4) {
      end = i;
      break;
    }
  }
  const match = end < 0 ? null : HEADER.exec(record.toString('latin1', 0, end + 1));
  if (!match) throw errors.malformedRecord(textOf(id), 'header does not parse');
  const [, enq, priority, maxAttempts, kind, delay, max] = match as unknown as string[];
  const fields: RecordFields = {
    enqueuedAt: enq ? Number.parseInt(enq, 36) : null,
    priority: Number(priority),
    maxAttempts: Number(maxAttempts),
    backoff: {
      type: kind === 'f' ? 'fixed' : 'exponential',
      delay: Number(delay),
      max: max === undefined ? DEFAULT_BACKOFF_MAX_MS : Number(max),
    },
  };
  const start = end + 2;
  switch (record[end + 1]) {
    case 0x73: // s
      return { ...fields, body: record.toString('utf8', start) };
    case 0x6a: // j
      try {
        return { ...fields, body: JSON.parse(record.toString('utf8', start)) as Body };
      } catch (cause) {
        const problem = `body is not valid JSON (${(cause as Error).message})`;
        throw errors.malformedRecord(textOf(id), problem);
      }
    case 0x62: // b: a copy, so the body does not hold the whole reply in memory
      return { ...fields, body: Buffer.from(record.subarray(start)) };
    case 0x72: // r
      return { ...fields, body: isUtf8(id) ? id.toString('utf8') : Buffer.from(id) };
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
