// One row of queue.list, from list.lua's fields: the id, name, due time, attempts, and the
// first PREVIEW_CHARS characters of the body (only that much of a record is ever read).
import { isUtf8 } from 'node:buffer';
import { decodeEntry } from '../history/entry.js';
import { headerBars, readTags, textOf } from '../record-read.js';
import { STUB } from '../spill.js';
import type { ListPosition, ListState } from './cursor.js';

export const PREVIEW_CHARS = 300;
/** bytes of body list.lua reads for a preview: a character is at most 4 bytes of UTF-8 */
export const PREVIEW_BYTES = PREVIEW_CHARS * 4;
/** list.lua's fields per item */
export const ITEM_FIELDS = 7;

/** One message on a page of `queue.list()`: where it is, and the start of its body. */
export interface ListItem {
  /** the id (for ids that are not valid UTF-8, with \xNN escapes: use idBytes to act on them) */
  id: string;
  /** the id's exact bytes, when they are not valid UTF-8 (raw members other programs added) */
  idBytes?: Buffer;
  /** its group */
  group: number;
  /** the state it was listed in */
  state: ListState;
  /** its job name, if it has one */
  name: string | undefined;
  /** when it is (or was) due, epoch ms; null for a dead letter */
  dueAt: number | null;
  /** deliveries so far, the running one included */
  attempts: number;
  /** the body's first PREVIEW_CHARS characters as text (bytes that are not UTF-8 in hex) */
  preview: string;
  /** the preview is the start of a longer body */
  truncated: boolean;
  /** the stored record's size in bytes (0 for a raw member that has none yet) */
  recordBytes: number;
  /**
   * done: false when its body (over 64 KiB) was not kept, as get() says; preview is then ''
   * and recordBytes the size of what stayed (the header), not of the body it had
   */
  bodyKept?: false;
  /** active: when its lease ends */
  leaseUntil?: number;
  /** done: when it finished */
  finishedAt?: number;
  /** dead: when it died, and why */
  diedAt?: number;
  /** dead: why it died */
  reason?: string;
  /** waiting (a flow parent): when it was added to wait for its children */
  waitingSince?: number;
}

/** An item and where it sits in the list's order. */
export interface PlacedItem {
  item: ListItem;
  position: ListPosition;
}

/** A delayed-set score as a due time in ms, as lib.lua's msOfScore has it. */
function msOfScore(score: string, unitMs: number): number {
  const ms = Number(score === 'inf' ? Number.POSITIVE_INFINITY : score) * unitMs;
  if (!(ms > 0)) return 0;
  return ms >= 9e15 ? 9e15 : Math.round(ms);
}

export function listItem(
  state: ListState,
  group: number,
  fields: (Buffer | number | null)[],
  unitMs: number,
): PlacedItem {
  const [phaseField, member, scoreField, record, failed, extra] = fields as (Buffer | null)[];
  const phase = Number(phaseField);
  const score = String(scoreField);
  const memberBytes = member as Buffer;
  // The ready set's member is the due time (11 hex digits), then the id.
  const inReadySet = state === 'ready' && phase === 0;
  const id = inReadySet ? memberBytes.subarray(11) : memberBytes;
  const text = textOf(id);
  const { name, preview, truncated, bodyKept } = previewOf(state, id, record, Number(fields[6]));
  let dueAt: number | null = null;
  let attempts = Number(String(failed));
  const item: ListItem = {
    id: text,
    ...(text === id.toString() ? {} : { idBytes: Buffer.from(id) }),
    group,
    state,
    name,
    dueAt,
    attempts,
    preview,
    truncated,
    recordBytes: Number(fields[6]),
    ...(bodyKept === false ? { bodyKept } : {}),
  };
  if (inReadySet) dueAt = Number.parseInt(memberBytes.toString('latin1', 0, 11), 16);
  else if (state === 'delayed' || state === 'ready') dueAt = msOfScore(score, unitMs);
  else if (state === 'active') {
    dueAt = extra ? Number.parseInt(extra.toString('latin1'), 10) : null;
    attempts += 1;
    item.leaseUntil = Number(score);
  } else if (state === 'done') {
    if (extra) ({ dueAt, attempts } = decodeEntry(extra));
    item.finishedAt = Number(score);
  } else if (state === 'waiting') {
    item.waitingSince = Number(score);
  } else {
    item.diedAt = Number(score);
    item.reason = extra ? extra.toString() : 'unknown';
  }
  item.dueAt = dueAt;
  item.attempts = attempts;
  return { item, position: { phase, score, group, member: Buffer.from(memberBytes) } };
}

interface Preview {
  name: string | undefined;
  preview: string;
  truncated: boolean;
  bodyKept?: false;
}

/** The name and body start of a (cut) record; a raw member's body is its id. */
function previewOf(
  state: ListState,
  id: Buffer,
  record: Buffer | null,
  recordBytes: number,
): Preview {
  if (!record) return { name: undefined, ...cut(bytesText(id)) };
  const last = headerBars(record)[3];
  const tags = last === undefined ? null : readTags(record, last + 1);
  // Unreadable records show what is stored: they are dead letters for that very reason.
  if (!tags || tags.kindAt < 0) return { name: undefined, ...cut(bytesText(record)) };
  const start = tags.kindAt + 1;
  const body = record.subarray(start);
  const kind = record[tags.kindAt];
  // Still a stub after the spilled starts were read: its body key is gone. A done job's is
  // dropped on purpose (history.lua forgetState); what is left is the nonce, which is no body.
  if (kind === STUB && state === 'done') {
    return { name: tags.name, preview: '', truncated: false, bodyKept: false };
  }
  const shown = kind === 0x72 ? bytesText(id) : kind === 0x62 ? bytesText(body) : body.toString();
  const { preview, truncated } = cut(shown);
  // A record longer than what was read (a cut one, or a spilled body's start) goes on.
  return { name: tags.name, preview, truncated: truncated || record.length < recordBytes };
}

function cut(text: string): { preview: string; truncated: boolean } {
  const chars = Array.from(text);
  if (chars.length <= PREVIEW_CHARS) return { preview: text, truncated: false };
  return { preview: chars.slice(0, PREVIEW_CHARS).join(''), truncated: true };
}

/** Bytes as text when they are UTF-8, else in hex, so a preview never holds raw binary. */
function bytesText(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  const hex = bytes
    .subarray(0, 96)
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');
  return `binary: ${hex}${bytes.length > 96 ? ' …' : ''}`;
}
