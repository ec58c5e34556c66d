// A handler's last error keeps its stack beside its message, in the same `err` hash field
// (format 8): `<message>\xff<stack>`. The message is UTF-8 made from a JS string, so it never
// holds the byte 0xff; a value without one (format 7, or an error skyq made: "lease expired")
// is a message alone.
import { isUtf8 } from 'node:buffer';

/** The most of a stack kept: its first 8 KiB (the frames nearest the throw). */
export const STACK_MAX_BYTES = 8 * 1024;

const MARK = 0xff;

/** The stack of what a handler threw, cut to STACK_MAX_BYTES at a character's edge; '' for none. */
export function stackOf(error: unknown): string {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string' || stack === '') return '';
  const bytes = Buffer.from(stack);
  if (bytes.length <= STACK_MAX_BYTES) return stack;
  let end = STACK_MAX_BYTES;
  // Back to the first byte of a character: UTF-8 continuation bytes are 10xxxxxx.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.toString('utf8', 0, end);
}

/** A stored `err` value as its message and stack (null when none was kept). */
export function splitError(stored: Buffer): { message: string; stack: string | null } {
  const at = stored.indexOf(MARK);
  if (at < 0) return { message: text(stored), stack: null };
  return { message: text(stored.subarray(0, at)), stack: text(stored.subarray(at + 1)) };
}

const text = (bytes: Buffer) => (isUtf8(bytes) ? bytes.toString('utf8') : bytes.toString('latin1'));
