/**
 * Generated stdin for `skyq produce`: lines of random bytes (text, control bytes, invalid UTF-8,
 * over-long lines, empty and blank lines, `quit` variants, CRLF endings, no final newline), in
 * plain mode or --json, and what produce must make of them, worked out from its documented
 * rules: a line over --max-line or not valid UTF-8 is refused (and reported by number); an
 * empty line is skipped; a line that trims to `quit` ends the input; every other line is added
 * with the line as its body (--json: the object's body, when the object is valid).
 */
import { isUtf8 } from 'node:buffer';
import { ASCII, type Rng, UNICODE } from './fuzz.js';

export interface StdinCase {
  json: boolean;
  maxLine: number;
  input: Buffer;
  /** bodies of the messages that must be added, in order */
  added: unknown[];
  /** numbers of the lines that must be refused */
  refused: number[];
}

const INVALID_UTF8 = ['80', 'c080', 'eda080', 'e282', 'ff', 'f8888080'];

function plainLine(rng: Rng, maxLine: number): Buffer {
  switch (rng.int(0, 9)) {
    case 0:
      return Buffer.from(rng.text(rng.int(1, 60), `${ASCII}  `));
    case 1:
      return Buffer.from(rng.text(rng.int(1, 30), UNICODE));
    case 2:
      return Buffer.concat([
        rng.bytes(rng.int(1, 20), 0x01, 0x09),
        rng.bytes(rng.int(0, 5), 0x0b, 0x1f),
      ]);
    case 3:
      return Buffer.concat([
        Buffer.from(rng.text(rng.int(0, 10), ASCII)),
        Buffer.from(rng.pick(INVALID_UTF8), 'hex'),
      ]);
    case 4:
      return Buffer.from(rng.text(rng.int(maxLine + 1, maxLine * 3 + 1), ASCII));
    case 5:
      return Buffer.from(rng.text(maxLine, ASCII)); // exactly at the limit
    case 6:
      return Buffer.from(rng.pick(['', '   ', '\t']));
    case 7:
      return Buffer.from(rng.pick(['quit', '  quit  ', 'QUIT', 'quit now', '\ufeffquit']));
    case 8:
      return Buffer.from(`\x00${rng.text(rng.int(0, 10), ASCII)}\x00`);
    default:
      return rng.bytes(rng.int(1, 40), 0x20, 0xff);
  }
}

function jsonLine(rng: Rng): Buffer {
  const body = rng.pick([
    () => rng.text(rng.int(0, 50), rng.pick([ASCII, UNICODE])),
    () => ({ n: rng.int(0, 100), tags: [rng.text(3, ASCII)] }),
    () => rng.int(-5, 5),
    () => null,
  ])();
  const valid = () => {
    const object: Record<string, unknown> = { body };
    if (rng.chance(0.3)) object.delay = rng.pick(['5s', 1000, '1h']);
    if (rng.chance(0.3)) object.priority = rng.int(0, 10);
    return JSON.stringify(object);
  };
  const text = rng.pick([
    valid,
    valid,
    valid,
    () => '{"body":',
    () => '[1,2]',
    () => '42',
    () => '"just text"',
    () => '{"bodyx":1}',
    () => '{"delay":"5s"}',
    () => '{"body":1,"delay":"5"}',
    () => '{"body":1,"priority":-1}',
    () => '{"body":1,"priority":"high"}',
  ])();
  return Buffer.from(text);
}

/** What produce does with one line's text in --json mode: the body it adds, or a refusal. */
function jsonVerdict(text: string): { body: unknown } | 'refused' {
  try {
    const value = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'refused';
    if (Object.keys(value).some((k) => !['body', 'delay', 'priority'].includes(k)))
      return 'refused';
    if (!('body' in value)) return 'refused';
    if (typeof value.delay === 'string' && !/^\d+(\.\d+)?(ms|s|m|h)$/.test(value.delay))
      return 'refused';
    if (value.priority !== undefined && !(Number.isInteger(value.priority) && value.priority >= 0))
      return 'refused';
    return { body: value.body };
  } catch {
    return 'refused';
  }
}

export function stdinCase(rng: Rng): StdinCase {
  const json = rng.chance(0.25);
  const maxLine = json ? 4096 : rng.pick([16, 64, 256, 1024]);
  const lines = Array.from({ length: rng.int(3, 12) }, () =>
    json && rng.chance(0.85) ? jsonLine(rng) : plainLine(rng, maxLine),
  );
  const endings: string[] = lines.map(() => (rng.chance(0.2) ? '\r\n' : '\n'));
  if (rng.chance(0.2)) endings[endings.length - 1] = ''; // no final newline
  const input = Buffer.concat(
    lines.flatMap((line, i) => [line, Buffer.from(endings[i] as string)]),
  );
  const added: unknown[] = [];
  const refused: number[] = [];
  for (const [i, line] of lines.entries()) {
    const number = i + 1;
    const withCr = endings[i] === '\r\n' ? Buffer.concat([line, Buffer.from('\r')]) : line;
    if (withCr.length === 0 && endings[i] === '') break; // nothing after the last newline
    // A final "\r" ends the line like "\n" and is not counted against --max-line.
    const bytes = withCr.at(-1) === 0x0d ? withCr.subarray(0, -1) : withCr;
    if (bytes.length > maxLine) {
      refused.push(number);
      continue;
    }
    if (!isUtf8(bytes)) {
      refused.push(number);
      continue;
    }
    const text = bytes.toString('utf8');
    if (text.trim() === 'quit') break;
    if (text.length === 0) continue;
    if (!json) added.push(text);
    else {
      const verdict = jsonVerdict(text);
      if (verdict === 'refused') refused.push(number);
      else added.push(verdict.body);
    }
  }
  return { json, maxLine, input, added, refused };
}
