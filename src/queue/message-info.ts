// What get() tells about one message, from an inspect.lua reply.
import { type Body, type DecodedRecord, decodeRecord, type ScheduleTag, textOf } from './record.js';

export type MessageState = 'delayed' | 'ready' | 'active' | 'dead';

export interface MessageInfo {
  id: string;
  group: number;
  state: MessageState;
  body: Body;
  /** the name it was added with, if any */
  name: string | undefined;
  /** the schedule occurrence it is, if it is one */
  schedule: ScheduleTag | undefined;
  priority: number;
  /** deliveries so far, the running one included */
  attempts: number;
  maxAttempts: number;
  dueAt: number | null;
  enqueuedAt: number | null;
  lastError: string | null;
  deadReason: string | null;
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
  const [state, record, failed, lastError, deadReason, dueMs, , priority] = reply;
  const text = (value: Buffer | number | null | undefined) =>
    value === null || value === undefined ? null : String(value);
  const raw = Buffer.from(`${rawHeader}r`);
  let decoded: DecodedRecord;
  try {
    decoded = decodeRecord(id, (record as Buffer | null) ?? raw);
  } catch {
    // Show what is stored rather than hide the message.
    decoded = { ...decodeRecord(id, raw), body: String(record) };
  }
  return {
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
    lastError: text(lastError),
    deadReason: text(deadReason),
  };
}
