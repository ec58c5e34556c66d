// Lines of a byte stream (stdin) for `skyq produce`, read as bytes so that
// nothing is altered: a line that is not valid UTF-8 is refused (a decoder
// would silently turn its bytes into U+FFFD), and an over-long line is refused
// without holding more than `maxBytes` of it in memory.
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
  let number = 0;
  const finish = (): InputLine => {
    number++;
    const bytes = Buffer.concat(parts);
    const length = size;
    parts = [];
    size = 0;
    if (length > maxBytes)
      return { number, problem: `line of ${length} bytes is over --max-line ${maxBytes}` };
    // "\r\n" line ends (a file from Windows) end the line like "\n".
    const line = bytes.at(-1) === CARRIAGE_RETURN ? bytes.subarray(0, -1) : bytes;
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
      // Past the limit the line is refused anyway: only its length is still counted.
      if (size <= maxBytes) parts.push(Buffer.from(piece));
      else parts = [];
      if (newline < 0) break;
      yield finish();
      start = newline + 1;
    }
  }
  if (size > 0) yield finish();
}
