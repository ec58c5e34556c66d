// Lines of a byte stream (stdin) for `skyq produce`, read as bytes so that
// nothing is altered: a line that is not valid UTF-8 is refused (a decoder
// would silently turn its bytes into U+FFFD), and an over-long line is refused
// without holding more than `maxBytes` of it (and a "\r") in memory.
import { isUtf8 } from 'node:buffer';

export type InputLine = { number: number; text: string } | { number: number; problem: string };

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export async function* readLines(
  input: AsyncIterable<Buffer | string>,
  maxBytes: number,
): AsyncGenerator<InputLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let last = -1; // the line's last byte so far: a final "\r" is not part of it
  let number = 0;
  const finish = (): InputLine => {
    number++;
    // "\r\n" line ends (a file from Windows) end the line like "\n": the "\r" is not
    // counted against --max-line either.
    const crlf = last === CARRIAGE_RETURN;
    const length = crlf ? size - 1 : size;
    const bytes = Buffer.concat(parts);
    parts = [];
    size = 0;
    last = -1;
    if (length > maxBytes)
      return { number, problem: `line of ${length} bytes is over --max-line ${maxBytes}` };
    const line = crlf ? bytes.subarray(0, -1) : bytes;
    if (!isUtf8(line)) return { number, problem: 'line is not valid UTF-8 (refused, not altered)' };
    return { number, text: line.toString('utf8') };
  };
  for await (const data of input) {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, newline < 0 ? chunk.length : newline);
      size += piece.length;
      if (piece.length > 0) last = piece[piece.length - 1] as number;
      // Past the limit (and a "\r") the line is refused anyway: only its length still counts.
      if (size <= maxBytes + 1) parts.push(Buffer.from(piece));
      else parts = [];
      if (newline < 0) break;
      yield finish();
      start = newline + 1;
    }
  }
  if (size > 0) yield finish();
}
