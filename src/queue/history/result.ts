// A handler's return value as the history keeps it (lua/history.lua):
//   "<duration ms>|<kind><data>", kind u none, s string, j JSON, b bytes,
//   t truncated (then the size it had, in bytes), e not serialisable (then why).
import { isUtf8 } from 'node:buffer';
import type { Body } from '../record.js';

export type JobResult =
  | { kind: 'none' }
  | { kind: 'value'; value: Body }
  | { kind: 'truncated'; bytes: number }
  | { kind: 'unserialisable'; reason: string };

/**
 * A result that could not leave the thread that made it (a pool thread's function or symbol):
 * kept as not serialisable, for this reason, as the actor keeps one JSON cannot write.
 */
export class UnserialisableResult {
  constructor(readonly reason: string) {}
}

/** What ack sends for one finished job. */
export function encodeResult(
  value: unknown,
  durationMs: number,
  maxBytes: number,
): string | Buffer {
  const head = `${Math.max(0, Math.round(durationMs))}|`;
  if (value === undefined) return `${head}u`;
  if (value instanceof UnserialisableResult) return `${head}e${value.reason}`;
  if (value instanceof Uint8Array) {
    if (value.length > maxBytes) return `${head}t${value.length}`;
    return Buffer.concat([Buffer.from(`${head}b`), value]);
  }
  let kind = 's';
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    kind = 'j';
    try {
      const json = JSON.stringify(value);
      if (json === undefined) return `${head}e${typeof value} is not a JSON value`;
      text = json;
    } catch (error) {
      return `${head}e${(error as Error).message}`;
    }
  }
  const bytes = Buffer.byteLength(text);
  return bytes > maxBytes ? `${head}t${bytes}` : `${head}${kind}${text}`;
}

/** Reads a kept result: `data` starts at its kind letter. */
export function decodeResult(data: Buffer): JobResult {
  const rest = data.subarray(1);
  switch (String.fromCharCode(data[0] ?? 0x75)) {
    case 's':
      return { kind: 'value', value: rest.toString('utf8') };
    case 'j':
      try {
        return { kind: 'value', value: JSON.parse(rest.toString('utf8')) as Body };
      } catch {
        return { kind: 'value', value: rest.toString('utf8') };
      }
    case 'b':
      return { kind: 'value', value: Buffer.from(rest) };
    case 't':
      return { kind: 'truncated', bytes: Number(rest.toString('latin1')) };
    case 'e':
      return { kind: 'unserialisable', reason: isUtf8(rest) ? rest.toString('utf8') : 'unknown' };
    default:
      return { kind: 'none' };
  }
}
