// One message is one hash field: a short header, then the body. Lua reads the
// header (priority, attempts, backoff) with one pattern; see lua/lib.lua.
//   <enqueuedAt base36>|<priority>|<maxAttempts>|<f|e><backoffMs>|<s|j><body>
import { errors } from './errors.js';

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };
/** A body is a string (stored as is) or any JSON value. */
export type Body = JsonValue;

export interface Backoff {
  type: 'fixed' | 'exponential';
  /** ms before the first retry; exponential doubles it for each further one */
  delay: number;
}

export interface RecordFields {
  enqueuedAt: number | null;
  priority: number;
  maxAttempts: number;
  backoff: Backoff;
}

export interface DecodedRecord extends RecordFields {
  body: Body;
}

/** The text a body is stored as; throws a body error when it cannot be serialised. */
export function serialiseBody(body: unknown, field = 'body'): string {
  if (typeof body === 'string') return `s${body}`;
  if (body === undefined || typeof body === 'function' || typeof body === 'symbol') {
    throw errors.body(field, `must be a string or a JSON value, not ${typeof body}`);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (cause) {
    throw errors.body(field, `cannot be serialised to JSON: ${(cause as Error).message}`, cause);
  }
  if (json === undefined) throw errors.body(field, 'cannot be serialised to JSON');
  return `j${json}`;
}

export function headerOf(fields: RecordFields): string {
  const enq = fields.enqueuedAt === null ? '' : fields.enqueuedAt.toString(36);
  const backoff = `${fields.backoff.type === 'fixed' ? 'f' : 'e'}${fields.backoff.delay}`;
  return `${enq}|${fields.priority}|${fields.maxAttempts}|${backoff}|`;
}

const HEADER = /^([0-9a-z]*)\|(\d+)\|(\d+)\|([fe])(\d+)\|([sj])/;

export function decodeRecord(id: string, record: string): DecodedRecord {
  const match = HEADER.exec(record);
  if (!match) throw errors.malformedRecord(id, 'header does not parse');
  const [head, enq, priority, maxAttempts, kind, delay, bodyKind] = match as unknown as string[];
  const text = record.slice((head as string).length);
  let body: Body = text;
  if (bodyKind === 'j') {
    try {
      body = JSON.parse(text) as Body;
    } catch (cause) {
      throw errors.malformedRecord(id, `body is not valid JSON (${(cause as Error).message})`);
    }
  }
  return {
    enqueuedAt: enq ? Number.parseInt(enq, 36) : null,
    priority: Number(priority),
    maxAttempts: Number(maxAttempts),
    backoff: { type: kind === 'f' ? 'fixed' : 'exponential', delay: Number(delay) },
    body,
  };
}
