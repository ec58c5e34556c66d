// A schedule's occurrence record, as its spec makes it (lua/schedule-lib.lua keeps the head
// and the tail and puts the occurrence's tag between them), and the digest of spec and record
// that tells an upsert of the same spec, which changes nothing.
import { createHash } from 'node:crypto';
import { type Body, headerOf, tagsOf } from '../record.js';
import { decodeRecord } from '../record-read.js';
import type { CheckedSpec, ScheduleState } from './spec.js';

export interface Template {
  /** header and name tag */
  head: string;
  /** kind letter and body */
  tail: string | Buffer;
  digest: string;
  /** head and tail together, as a record without its occurrence tag */
  record: Buffer;
}

/** `spec`: the checked state, in the group the schedule lives in. */
export function templateOf(checked: CheckedSpec, spec: CheckedSpec['state']): Template {
  const header = headerOf({
    enqueuedAt: null,
    priority: spec.priority,
    maxAttempts: checked.maxAttempts,
    backoff: checked.backoff,
  });
  const head = header + tagsOf({ name: spec.name });
  const tail =
    typeof checked.body.data === 'string'
      ? `${checked.body.kind}${checked.body.data}`
      : Buffer.concat([Buffer.from(checked.body.kind), checked.body.data]);
  // The same text as format 7 digested, so an upsert of an unchanged spec stays a no-op.
  const digest = createHash('sha256')
    .update(JSON.stringify({ ...spec, anchor: spec.startAt ?? null }))
    .update(head)
    .update(tail)
    .digest('base64url')
    .slice(0, 22);
  return { head, tail, digest, record: Buffer.concat([Buffer.from(head), Buffer.from(tail)]) };
}

/** The state with its occurrences' body, read from their record (head and tail). */
export function withBody(state: ScheduleState, record: Buffer): ScheduleState {
  let body: Body;
  try {
    body = decodeRecord(Buffer.from(state.id), record).body;
  } catch {
    body = record.toString(); // show what is stored rather than hide the schedule
  }
  return { ...state, body };
}
