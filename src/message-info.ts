// What get() tells about one message, from an inspect.lua reply.
import { type Body, type DecodedRecord, decodeRecord } from './record.js';

export type MessageState = 'delayed' | 'ready' | 'active' | 'dead';

export interface MessageInfo {
  id: string;
  group: number;
  state: MessageState;
  body: Body;
  priority: number;
  /** deliveries so far, the running one included */
  attempts: number;
  maxAttempts: number;
  dueAt: number | null;
  enqueuedAt: number | null;
  lastError: string | null;
  deadReason: string | null;
}

export function messageInfo(
  id: string,
  group: number,
  reply: (string | false)[],
  rawHeader: string,
): MessageInfo {
  const [state, record, failed, lastError, deadReason, dueMs] = reply;
  let decoded: DecodedRecord;
  try {
    decoded = decodeRecord(id, record || rawHeader + id);
  } catch {
    // Show what is stored rather than hide the message.
    decoded = { ...decodeRecord(id, rawHeader), body: record || '' };
  }
  return {
    id,
    group,
    state: state as MessageState,
    body: decoded.body,
    priority: decoded.priority,
    attempts: Number(failed) + (state === 'active' ? 1 : 0),
    maxAttempts: decoded.maxAttempts,
    dueAt: dueMs ? Number(dueMs) : null,
    enqueuedAt: decoded.enqueuedAt,
    lastError: lastError || null,
    deadReason: deadReason || null,
  };
}
