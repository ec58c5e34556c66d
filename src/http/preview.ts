// A message body as text for the page, cut to a length. The page shows it with textContent, so
// whatever it holds (markup included) stays text.
import { isUtf8 } from 'node:buffer';
import type { Body } from '../queue/record.js';

export interface Preview {
  text: string;
  /** characters the full text has */
  length: number;
  truncated: boolean;
}

export function preview(body: Body, max: number): Preview {
  const text =
    typeof body === 'string' ? body : Buffer.isBuffer(body) ? bytes(body) : JSON.stringify(body);
  return {
    text: text.length > max ? text.slice(0, max) : text,
    length: text.length,
    truncated: text.length > max,
  };
}

/** A raw member's bytes: as text when they are UTF-8, else counted and shown in hex. */
function bytes(body: Buffer): string {
  if (isUtf8(body)) return body.toString('utf8');
  const hex = body
    .subarray(0, 64)
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');
  return `binary, ${body.length} bytes: ${hex}${body.length > 64 ? ' …' : ''}`;
}
