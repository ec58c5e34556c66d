// What a consumer receives, and how a claim.lua reply becomes messages.
import { isUtf8 } from 'node:buffer';
import type { FlowChild } from './flows/outcome.js';
import type { Body, FlowParent, ScheduleTag } from './record.js';
import { parentRef } from './record.js';
import { decodeRecord, textOf } from './record-read.js';

/** A leased message as a consumer receives it; `T` is what its body is taken to be (see Queue). */
export interface Message<T = Body> {
  /** the id; for a raw member that is not valid UTF-8, its bytes with \xNN escapes */
  id: string;
  /** its group */
  group: number;
  /** the body as it was added (a raw member's text, as a string or Buffer) */
  body: T;
  /** this delivery's number, from 1 */
  attempts: number;
  /** deliveries it gets before it becomes a dead letter */
  maxAttempts: number;
  /** its priority (lower runs first) */
  priority: number;
  /** when it was due (epoch ms, Redis clock) */
  dueAt: number;
  /** when add() was called (epoch ms, producer clock); null for raw members */
  enqueuedAt: number | null;
  /** the name it was added with (`add(body, { name })`); undefined for unnamed ones */
  name: string | undefined;
  /** the schedule occurrence it is (queue.schedules), else undefined */
  schedule: ScheduleTag | undefined;
  /** a flow child (queue.flows): its parent, which runs once every child has ended */
  parent: FlowParent | undefined;
  /** a flow parent: how many children it has (their outcomes are in `children`) */
  childCount: number | undefined;
  /**
   * a flow parent: its children in the order the flow gave them, each with how it ended and
   * its result (the runtime reads them before the handler starts; queue.flows.children(job)
   * reads them for a message claimed by hand)
   */
  children: FlowChild[] | undefined;
  /** this delivery's lease: ack, fail, release and extendLease act only while it holds */
  readonly token: string;
  /** the id's exact bytes when they are not valid UTF-8 (raw members other programs added) */
  readonly idBytes?: Buffer;
  /** set by the consumer before ack: kept as the job's result while its history is (keepDone) */
  result?: unknown;
  /** set by the consumer before ack: how long the handler ran, in ms */
  durationMs?: number;
}

/** What one poll (claim) brought: the leased messages and when to look again. */
export interface PollResult<B = Body> {
  /** the messages leased */
  messages: Message<B>[];
  /** Redis clock at the claim */
  now: number;
  /** when to look again if nothing came: next due time or lease expiry; -1 = nothing pending */
  nextDueAt: number;
  /** how many of the acks sent with the poll were still the caller's */
  acked: number;
  /** acks refused because the lease had passed to another consumer (its ids) */
  stale: string[];
  /** the group is paused: nothing was leased; resuming wakes the consumer */
  paused: boolean;
  /** leased messages whose record could not be read: poll dead-letters them */
  malformed: {
    /** the message, as much of it as could be read */
    message: Message;
    /** what is wrong with its record */
    reason: string;
  }[];
  /** how many this claim held back for the rate limits it was given (`limits`) */
  heldBack: number;
  /** how many of each name in `limits` are held back now in the group, in their order */
  held: number[];
}

/** The key Redis knows a message by: its exact bytes when the id is not valid UTF-8. */
export const keyOf = (message: Pick<Message, 'id' | 'idBytes'>): string | Buffer =>
  message.idBytes ?? message.id;

/** Parses claim.lua's reply, asked for as Buffers so any member's bytes survive. */
export function parseClaimReply(group: number, reply: unknown): PollResult {
  const flat = reply as (Buffer | number)[];
  const token = String(flat[4]);
  const staleCount = Number(flat[5]);
  const stale: string[] = [];
  for (let i = 6; i < 6 + staleCount; i++) stale.push(textOf(flat[i] as Buffer));
  const heldText = String(flat[7 + staleCount]);
  const first = 8 + staleCount;
  const result: PollResult = {
    messages: [],
    now: Number(flat[0]),
    nextDueAt: Number(flat[1]),
    acked: Number(flat[2]),
    paused: Number(flat[3]) === 1,
    stale,
    malformed: [],
    heldBack: Number(flat[6 + staleCount]),
    held: heldText === '' ? [] : heldText.split(',').map(Number),
  };
  for (let i = first; i < flat.length; i += 4) {
    const raw = flat[i] as Buffer;
    const utf8 = isUtf8(raw);
    // One literal of one shape for every message: V8 keeps them fast (spreads did not).
    const message: Message = {
      id: utf8 ? raw.toString('utf8') : textOf(raw),
      group,
      body: null,
      attempts: Number(flat[i + 2]) + 1,
      maxAttempts: 1,
      priority: 0,
      dueAt: Number(flat[i + 3]),
      enqueuedAt: null,
      name: undefined,
      schedule: undefined,
      parent: undefined,
      childCount: undefined,
      children: undefined,
      token,
      idBytes: utf8 ? undefined : Buffer.from(raw),
      result: undefined,
      durationMs: undefined,
    };
    try {
      const record = decodeRecord(raw, flat[i + 1] as Buffer);
      message.body = record.body;
      message.maxAttempts = record.maxAttempts;
      message.priority = record.priority;
      message.enqueuedAt = record.enqueuedAt;
      message.name = record.name;
      message.schedule = record.schedule;
      message.parent = record.parent;
      message.childCount = record.childCount;
      result.messages.push(message);
    } catch (error) {
      result.malformed.push({ message, reason: (error as Error).message });
    }
  }
  return result;
}

/** The messages by lease token, in the order the lease scripts name them. */
function byToken<T extends Pick<Message, 'token'>>(messages: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const message of messages) {
    const list = out.get(message.token);
    if (list) list.push(message);
    else out.set(message.token, [message]);
  }
  return out;
}

/** ARGV for the lease scripts: token, count, ids... for each token among the messages. */
export function leaseArgs(messages: readonly Message[]): (string | Buffer)[] {
  const args: (string | Buffer)[] = [];
  for (const [token, list] of byToken(messages)) {
    args.push(token, String(list.length));
    for (const message of list) args.push(keyOf(message));
  }
  return args;
}

/**
 * ARGV for an ack (lua/history.lua ackLeased): the retention, how many lease arguments follow,
 * the leases, then when kept each one's result (`result(message)`), in the order named; then,
 * only when some are flow members, the flow section (lua/flow-lib.lua flow.acked): how many,
 * then each one's position among those named, its kind, its parent's ref and its result.
 */
export function ackArgs(
  messages: readonly Message[],
  retention: string,
  result: (message: Message) => string | Buffer,
  events = false,
): (string | Buffer)[] {
  const groups = byToken(messages);
  const leases: (string | Buffer)[] = [];
  const results: (string | Buffer)[] = [];
  const names: string[] = [];
  const flows: (string | Buffer)[] = [];
  let position = 0;
  for (const [token, list] of groups) {
    leases.push(token, String(list.length));
    for (const message of list) {
      position++;
      leases.push(keyOf(message));
      if (retention !== '') results.push(result(message));
      if (events) names.push(message.name ?? '');
      // Flow members only: a message of no flow adds nothing to its ack.
      if (message.parent !== undefined || message.childCount !== undefined) {
        const kind = `${message.parent ? 'f' : ''}${message.childCount === undefined ? '' : 'c'}`;
        const ref = message.parent ? parentRef(message.parent) : '';
        flows.push(String(position), kind, ref, message.parent ? result(message) : '');
      }
    }
  }
  const args = [retention, events ? '1' : '', String(leases.length), ...leases];
  args.push(...results, ...names);
  if (flows.length > 0) args.push(String(flows.length / 4), ...flows);
  return args;
}
