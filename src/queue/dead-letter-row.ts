// One dead letter from dead-list.lua's fields, and where it sits in the order of a page over
// all groups (time of death, group, id).
import type { DeadPosition } from './dead-cursor.js';
import type { DeadLetter } from './dead-letters.js';
import type { Body } from './record.js';
import { decodeRecord, headerBars, readTags, textOf } from './record-read.js';

export function positionOf(letter: DeadLetter): DeadPosition {
  return {
    diedAt: letter.diedAt,
    group: letter.group,
    id: letter.idBytes ?? Buffer.from(letter.id),
  };
}

export function deadLetter(group: number, fields: (Buffer | null)[], preview: number): DeadLetter {
  const [id, diedAt, record, reason, lastError, attempts, bytes] = fields as [
    Buffer,
    ...(Buffer | null)[],
  ];
  const recordBytes = Number(String(bytes));
  const cut = preview > 0 && record !== null && record.length < recordBytes;
  let body: Body = record ? record.toString() : '';
  let name: string | undefined;
  try {
    // A raw member that died before it was ever leased has no record: its id is its body.
    if (cut) ({ body, name } = bodyStart(record));
    else {
      const decoded = decodeRecord(id, record ?? Buffer.from('|0|1|f0|r'));
      body = decoded.body;
      name = decoded.name;
    }
  } catch {
    // Unreadable records are dead letters for that very reason: show the stored text.
  }
  const text = textOf(id);
  return {
    id: text,
    ...(text === id.toString() ? {} : { idBytes: Buffer.from(id) }),
    group,
    diedAt: Number(String(diedAt)),
    reason: reason ? reason.toString() : 'unknown',
    lastError: lastError ? lastError.toString() : null,
    attempts: Number(String(attempts)),
    body,
    ...(name === undefined ? {} : { name }),
    ...(preview > 0 ? { truncated: cut, recordBytes } : {}),
  };
}

/** The start of a cut record's body: bytes stay bytes, JSON and text show as text. */
function bodyStart(record: Buffer): { body: Body; name: string | undefined } {
  const last = headerBars(record)[3];
  if (last === undefined) throw new Error('no header');
  const { kindAt, name } = readTags(record, last + 1);
  if (kindAt < 0) throw new Error('a tag does not parse');
  const rest = record.subarray(kindAt + 1);
  const body = record[kindAt] === 0x62 ? Buffer.from(rest) : rest.toString('utf8'); // 'b': bytes
  return { body, name };
}
