// What get() tells about one message, from an inspect.lua reply.
import { splitError } from './error-stack.js';
import { decodeEntry } from './history/entry.js';
import type { JobResult } from './history/result.js';
import type { Body, DecodedRecord, FlowParent, ScheduleTag } from './record.js';
import { decodeRecord, headerBars, readTags, textOf } from './record-read.js';
import { jobReports } from './reports.js';
import { nonceOf } from './spill.js';

/**
 * Where a message is: waiting for its due time, due, leased, dead, done and kept, or (a flow
 * parent) waiting for its children.
 */
export type MessageState = 'delayed' | 'ready' | 'active' | 'dead' | 'done' | 'waiting';

/** A flow parent's children counted by where they are (queue.flows). */
export interface ChildCounts {
  /** how many children it has */
  total: number;
  /** children not ended yet, waiting for their due time */
  delayed: number;
  /** children not ended yet, due */
  ready: number;
  /** children running now */
  active: number;
  /** children that are parents too, waiting for their own children */
  waiting: number;
  /** children done */
  done: number;
  /** children dead: an optional one, or the one its parent died of */
  dead: number;
  /** optional children cancelled */
  cancelled: number;
}

/** What `queue.get(id)` tells about one message; `B` is its body's type (see Queue). */
export interface MessageInfo<B = Body> {
  /** its id */
  id: string;
  /** its group */
  group: number;
  /** where it is now */
  state: MessageState;
  /** the body (null for a done job whose body, over 64 KiB, was not kept: see bodyKept) */
  body: B;
  /** the name it was added with, if any */
  name: string | undefined;
  /** the schedule occurrence it is, if it is one */
  schedule: ScheduleTag | undefined;
  /** its priority (lower runs first) */
  priority: number;
  /** deliveries so far, the running one included */
  attempts: number;
  /** deliveries it gets before it becomes a dead letter */
  maxAttempts: number;
  /** when it is (or was) due, epoch ms on Redis's clock; null when not known */
  dueAt: number | null;
  /** when it was added (epoch ms, producer clock); null for raw members */
  enqueuedAt: number | null;
  /** the last error its handler threw, if any */
  lastError: string | null;
  /** the stack of the error a handler threw last (its first 8 KiB), when it was an Error */
  lastErrorStack: string | null;
  /** dead: why it died */
  deadReason: string | null;
  /** active: when its lease ends (epoch ms, Redis clock) */
  leaseUntil?: number;
  /** dead: when it died (epoch ms, Redis clock) */
  diedAt?: number;
  /** done: when it finished (epoch ms, Redis clock) */
  finishedAt?: number;
  /** done: how long its handler ran, in ms */
  durationMs?: number;
  /** done: what the handler returned (undefined when nothing, or when it was not kept whole) */
  result?: Body | undefined;
  /** done: how the result was kept: none, the value, truncated (its size) or not serialisable */
  resultKept?: JobResult['kind'];
  /** done, with a result over the limit: its size in bytes */
  resultBytes?: number;
  /** done: false when its body (over 64 KiB) was not kept; body is then null */
  bodyKept?: false;
  /** when its id's dedupe window ends (epoch ms, Redis clock), while one is open */
  dedupeUntil?: number;
  /** the last progress its handler reported (ctx.progress), when it reported one */
  progress?: unknown;
  /** the last lines its handler logged (ctx.log), oldest first: at most 100, when it logged */
  logs?: string[];
  /** how many lines it logged in all (those no longer kept included), when it logged */
  logCount?: number;
  /** a flow child: its parent */
  parent?: FlowParent;
  /** a flow parent: its children counted by state (queue.flows.get(id) has each one) */
  children?: ChildCounts;
}

/** Counts of `total` children none of which is known to be anywhere yet. */
export const noChildren = (total: number): ChildCounts => ({
  total,
  delayed: 0,
  ready: 0,
  active: 0,
  waiting: 0,
  done: 0,
  dead: 0,
  cancelled: 0,
});

/** The header (and tags) of a stub whose body key is gone, as a record of its own. */
function keptHeader(record: Buffer | null): DecodedRecord | null {
  const last = record ? headerBars(record)[3] : undefined;
  if (!record || last === undefined || !nonceOf(record)) return null;
  const kindAt = readTags(record, last + 1).kindAt;
  try {
    return decodeRecord(
      Buffer.from(''),
      Buffer.concat([record.subarray(0, kindAt), Buffer.from('s')]),
    );
  } catch {
    return null;
  }
}

/**
 * `reply` is inspect.lua's, as Buffers. A raw member that was never leased has no record:
 * it is shown with the queue's defaults (`rawHeader`), its id as the body.
 */
export function messageInfo(
  id: Buffer,
  group: number,
  reply: (Buffer | number | null)[],
  rawHeader: string,
): MessageInfo {
  const [state, record, failed, lastError, deadReason, dueMs, score, priority, entry, window] =
    reply;
  const [report, lines] = reply.slice(10) as unknown[];
  const text = (value: Buffer | number | null | undefined) =>
    value === null || value === undefined ? null : String(value);
  const failure = Buffer.isBuffer(lastError) ? splitError(lastError) : null;
  const raw = Buffer.from(`${rawHeader}r`);
  let decoded: DecodedRecord;
  try {
    decoded = decodeRecord(id, (record as Buffer | null) ?? raw);
  } catch {
    const kept = String(state) === 'done' && keptHeader(record as Buffer | null);
    // A done job whose spilled body was not kept (history.lua): its header still tells.
    if (kept) decoded = { ...kept, body: null };
    // Show what is stored rather than hide the message.
    else decoded = { ...decodeRecord(id, raw), body: String(record) };
  }
  const info: MessageInfo = {
    id: textOf(id),
    group,
    state: String(state) as MessageState,
    body: decoded.body,
    name: decoded.name,
    schedule: decoded.schedule,
    priority: Number(text(priority) ?? decoded.priority),
    attempts: Number(text(failed)) + (String(state) === 'active' ? 1 : 0),
    maxAttempts: decoded.maxAttempts,
    dueAt: dueMs === null || dueMs === undefined ? null : Number(text(dueMs)),
    enqueuedAt: decoded.enqueuedAt,
    lastError: failure?.message ?? null,
    lastErrorStack: failure?.stack ?? null,
    deadReason: text(deadReason),
  };
  if (String(state) === 'active' && score !== null) info.leaseUntil = Number(text(score));
  if (String(state) === 'dead' && score !== null) info.diedAt = Number(text(score));
  if (window !== null && window !== undefined) info.dedupeUntil = Number(text(window));
  Object.assign(info, jobReports(report, lines));
  if (decoded.parent) info.parent = decoded.parent;
  // A flow parent: counted by queue.get from its flow data (flows/read.ts childCounts).
  if (decoded.childCount !== undefined) info.children = noChildren(decoded.childCount);
  if (String(state) === 'done' && decoded.body === null && nonceOf(record as Buffer | null)) {
    info.bodyKept = false;
  }
  if (String(state) === 'done' && Buffer.isBuffer(entry)) {
    const kept = decodeEntry(entry);
    info.attempts = kept.attempts;
    info.dueAt = kept.dueAt;
    info.finishedAt = Number(text(score));
    info.durationMs = kept.durationMs;
    info.resultKept = kept.result.kind;
    if (kept.result.kind === 'value') info.result = kept.result.value;
    if (kept.result.kind === 'truncated') info.resultBytes = kept.result.bytes;
    if (kept.result.kind === 'unserialisable') info.lastError = kept.result.reason;
  }
  return info;
}
