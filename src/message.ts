// What a consumer receives, and how a claim.lua reply becomes messages.
import type { Body } from './record.js';
import { decodeRecord } from './record.js';

export interface Message<T extends Body = Body> {
  id: string;
  group: number;
  body: T;
  /** this delivery's number, from 1 */
  attempts: number;
  maxAttempts: number;
  priority: number;
  /** when it was due (epoch ms, Redis clock) */
  dueAt: number;
  /** when add() was called (epoch ms, producer clock); null for raw members */
  enqueuedAt: number | null;
}

export interface PollResult {
  messages: Message[];
  /** Redis clock at the claim */
  now: number;
  /** when to look again if nothing came: next due time or lease expiry; -1 = nothing pending */
  nextDueAt: number;
  /** how many of the acks sent with the poll were still leased */
  acked: number;
  /** the group is paused: nothing was leased; resuming wakes the consumer */
  paused: boolean;
  /** leased messages whose record could not be read: the caller dead-letters them */
  malformed: { id: string; reason: string }[];
}

export function parseClaimReply(group: number, reply: unknown): PollResult {
  const flat = reply as (string | number)[];
  const result: PollResult = {
    messages: [],
    now: Number(flat[0]),
    nextDueAt: Number(flat[1]),
    acked: Number(flat[2]),
    paused: Number(flat[3]) === 1,
    malformed: [],
  };
  for (let i = 4; i < flat.length; i += 4) {
    const id = String(flat[i]);
    try {
      const record = decodeRecord(id, String(flat[i + 1]));
      result.messages.push({
        id,
        group,
        body: record.body,
        attempts: Number(flat[i + 2]) + 1,
        maxAttempts: record.maxAttempts,
        priority: record.priority,
        dueAt: Number(flat[i + 3]),
        enqueuedAt: record.enqueuedAt,
      });
    } catch (error) {
      result.malformed.push({ id, reason: (error as Error).message });
    }
  }
  return result;
}
