// Records over SPILL_BYTES live in a string key of their own, `{prefix:g}:body:<nonce>`,
// written and read with plain SET and MGET; the msg hash holds a stub in their place: the
// same header, kind 'x', the nonce. A body passed through Lua is copied into and out of the
// script (1 MiB: 3–8 ms of Redis time here, page faults included), which no script call can
// afford; a plain command takes a big argument as it came off the socket.
// The nonce is random, not the id: an add that turns out not to store its message (a caller
// id still pending, a generated id taken) must not have overwritten another message's body.
// A body key is written with an expiry, made permanent by add.lua when its message is
// stored, and deleted with its message (lib.lua forget), so a failed add leaves nothing for
// long.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import { headerBars, readTags } from './record.js';

/** Records longer than this are spilled. */
export const SPILL_BYTES = 64 * 1024;
/** How long a body key lives before add.lua keeps it: far longer than any add takes. */
export const SPILL_TTL_MS = 24 * 3_600_000;

const STUB = 0x78; // 'x'
/** Longer records are not stubs: a header is at most ~60 bytes, its tags ~400, the nonce 12. */
const STUB_MAX = 512;

export interface Spill {
  nonce: string;
  /** the whole record (header, kind, body), as a short record would be stored */
  record: string | Buffer;
  bytes: number;
}

/** A stub for `record` (which starts with `header`, its tags included) and what to store beside it. */
export function spill(header: string, record: string | Buffer, bytes: number) {
  const nonce = randomBytes(9).toString('base64url');
  return { stub: `${header}x${nonce}`, spill: { nonce, record, bytes } };
}

export const bodyKey = (prefix: string, group: number, nonce: string): string =>
  `{${prefix}:${group}}:body:${nonce}`;

/** Writes spilled records beside their group's msg hash, before the add that keeps them. */
export function storeSpills(
  client: RedisClient,
  prefix: string,
  group: number,
  spills: Spill[],
): Promise<unknown> {
  return Promise.all(
    spills.map((s) => client.set(bodyKey(prefix, group, s.nonce), s.record, 'PX', SPILL_TTL_MS)),
  );
}

/** The nonce of a stub record; null for any other record. */
export function nonceOf(record: Buffer | null | undefined): string | null {
  if (!record || record.length > STUB_MAX) return null;
  const last = headerBars(record)[3];
  if (last === undefined) return null;
  const kindAt = readTags(record, last + 1).kindAt;
  return kindAt > 0 && record[kindAt] === STUB ? record.toString('latin1', kindAt + 1) : null;
}

/** unspill() bound to a queue's client and prefix. */
export type Unspill = (
  group: number,
  records: unknown[],
  at: number,
  step: number,
) => Promise<void>;

/**
 * Replaces each stub among `records[at]`, `records[at + step]`, … by the record it stands
 * for, read with one MGET. A stub whose key is gone stays: decoding it says so.
 */
export async function unspill(
  client: RedisClient,
  prefix: string,
  group: number,
  records: unknown[],
  at: number,
  step: number,
): Promise<void> {
  const where: number[] = [];
  const keys: string[] = [];
  for (let i = at; i < records.length; i += step) {
    const nonce = nonceOf(records[i] as Buffer | null);
    if (nonce === null) continue;
    where.push(i);
    keys.push(bodyKey(prefix, group, nonce));
  }
  if (keys.length === 0) return;
  const found = await client.mgetBuffer(...keys);
  found.forEach((record, k) => {
    if (record) records[where[k] as number] = record;
  });
}
