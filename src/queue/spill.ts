// Records over SPILL_BYTES live in a string key of their own, `{prefix:g}:body:<nonce>`,
// written and read with plain SET and MGET; the msg hash holds a stub in their place: the
// same header, kind 'x', the nonce. A body passed through Lua is copied into and out of the
// script (1 MiB: 3–8 ms of Redis time here, page faults included), which no script call can
// afford; a plain command takes a big argument as it came off the socket.
//
// A nonce is "<ident>.<attempt>": the ident is the message's own (random, not the id: an
// add that turns out not to store its message must not touch another message's body), the
// attempt is new on every send, so a retry never writes a key some stored message uses (a
// retry that rewrote a stored body's key, then revived or failed, lost that body).
//
// No body key ever has an expiry: a `volatile-*` eviction policy may evict only keys that
// have one, so none of skyq's can go. A key not yet kept by its add is listed instead in
// `{prefix:g}:spills` (nonce → when it was written), written with it in one MULTI; add.lua
// takes the nonce off the list as it keeps or deletes the key. A nonce still listed belongs
// to an add that never ran, so no message refers to it: a failed add drops its own at once
// (spill-drop.lua), a retry those of the attempts before it, and add.lua and claim.lua
// drop any listed longer than SPILL_ORPHAN_MS (an add that arrives later finds its body
// gone and fails, storing nothing).
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import { headerBars, readTags } from './record-read.js';

/** Records longer than this are spilled. */
export const SPILL_BYTES = 64 * 1024;
/** How long a body key written for an add that never ran is kept (lib.lua SPILL_ORPHAN_MS). */
export const SPILL_ORPHAN_MS = 3_600_000;

/** The kind letter of a spilled record's stub, 'x' (browse/item.ts knows one by it too). */
export const STUB = 0x78;
/** Longer records are not stubs: a header is at most ~60 bytes, its tags ~400, the nonce 17. */
const STUB_MAX = 512;

export interface Spill {
  /** the message's part of every nonce; each send adds an attempt of its own */
  ident: string;
  /** the stub without its attempt: header, 'x', ident, '.' */
  stubHead: string;
  /** the whole record (header, kind, body), as a short record would be stored */
  record: string | Buffer;
  bytes: number;
  /** nonces of the sends so far: the latest one's key is the one add.lua keeps */
  nonces: string[];
}

/** One send of a spilled record: the key's nonce and the stub naming it. */
export interface SpillAttempt {
  nonce: string;
  stub: string;
  record: string | Buffer;
}

/** The attempt part of a nonce: fixed length, so a stub's size is known in advance. */
const attemptTag = () => randomBytes(3).toString('base64url');

/** A stub for `record` (which starts with `header`, its tags included) and what to store beside it. */
export function spill(header: string, record: string | Buffer, bytes: number) {
  const ident = randomBytes(9).toString('base64url');
  const stubHead = `${header}x${ident}.`;
  return {
    stub: `${stubHead}${attemptTag()}`,
    spill: { ident, stubHead, record, bytes, nonces: [] } as Spill,
  };
}

/** A fresh attempt for `s`, remembered in s.nonces. */
export function nextAttempt(s: Spill): SpillAttempt {
  const tag = attemptTag();
  const nonce = `${s.ident}.${tag}`;
  s.nonces.push(nonce);
  return { nonce, stub: `${s.stubHead}${tag}`, record: s.record };
}

export const bodyKey = (prefix: string, group: number, nonce: string): string =>
  `{${prefix}:${group}}:body:${nonce}`;

/**
 * Writes spilled records beside their group's msg hash, before the add that keeps them, each
 * with its line in the spills list in the same MULTI (both or neither). `now` is the group's
 * Redis time, which the orphan sweep compares with.
 */
export async function storeSpills(
  client: RedisClient,
  prefix: string,
  group: number,
  spillsKey: string,
  spills: SpillAttempt[],
  now: number,
): Promise<void> {
  const multi = client.multi();
  for (const s of spills) {
    multi.set(bodyKey(prefix, group, s.nonce), s.record);
    multi.zadd(spillsKey, now, s.nonce);
  }
  const replies = await multi.exec();
  const failed = replies?.find(([error]) => error);
  if (!replies || failed) throw failed?.[0] ?? new Error('MULTI of spilled bodies was discarded');
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

/**
 * Like unspill(), but replaces each stub by only the start of its record: the header, the
 * tags, kind and `bytes` bytes of body (GETRANGE), for previews that must not read whole bodies.
 */
export async function unspillStart(
  client: RedisClient,
  prefix: string,
  group: number,
  records: unknown[],
  at: number,
  step: number,
  bytes: number,
): Promise<void> {
  const reads: Promise<void>[] = [];
  for (let i = at; i < records.length; i += step) {
    const stub = records[i] as Buffer | null;
    const nonce = nonceOf(stub);
    if (nonce === null || !stub) continue;
    // The stub's header and tags are the record's: its kind letter sits where the record's does.
    const kindAt = stub.length - nonce.length - 1;
    const key = bodyKey(prefix, group, nonce);
    reads.push(
      client.getrangeBuffer(key, 0, kindAt + bytes).then((start) => {
        if (start.length > 0) records[i] = start;
      }),
    );
  }
  await Promise.all(reads);
}
