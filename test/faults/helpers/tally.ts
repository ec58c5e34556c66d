/**
 * Id accounting for the fault suite. The tally fixture (test/faults/fixtures/tally.mjs) records
 * every finished message on a recorder server no fault touches; these helpers read that record
 * and compare it with the ids whose add resolved:
 * - lost: an acknowledged id never finished (must be 0);
 * - duplicates: finishes beyond the first of an id (must not exceed the messages in flight);
 * - in flight: the leased messages (the groups' active sets) at the fault.
 * Recovery is measured with lease tokens: a token's counter (`{p:g}:tok`) only grows, so a
 * finish whose token is above the counter read at the fault came from a claim made after it.
 */
import type { Cluster, Redis } from 'ioredis';
import { expect } from 'vitest';
import { groupKeys, keyOf } from '../../../src/base/keys.js';
import { waitFor } from '../../helpers/queue.js';

export const TALLY = new URL('../fixtures/tally.mjs', import.meta.url).pathname;

/** One finish, as the tally fixture records it. */
export interface Finish {
  h: string;
  g: number;
  a: number;
  k: number;
  s: number;
  t: number;
  p: number;
  th: number;
  b?: string;
  /** a flow parent's children as it saw them, a letter each (d done, x dead, p pending) */
  c?: string;
}

/** A fault the tally fixture made on purpose (see its `fault` body). */
export interface HandlerFault {
  h: string;
  g: number;
  t: number;
  th: number;
  kind: string;
  leased: number;
}

export interface Account {
  expected: number;
  /** distinct expected ids finished */
  handled: number;
  /** expected ids never finished (hex) */
  lost: string[];
  /** finishes of expected ids beyond their first */
  duplicates: number;
  /** the ids finished more than once (hex) */
  duplicated: string[];
  /** finishes of ids nobody was told were added (an add that failed after Redis applied it) */
  unexpected: number;
}

type Client = Redis | Cluster;

export const hexOf = (id: string | Buffer): string =>
  (typeof id === 'string' ? Buffer.from(id, 'utf8') : id).toString('hex');

export async function readFinishes(recorder: Client): Promise<Finish[]> {
  return (await recorder.lrange('done', 0, -1)).map((line) => JSON.parse(line) as Finish);
}

export async function readFaults(recorder: Client): Promise<HandlerFault[]> {
  return (await recorder.lrange('faults', 0, -1)).map((line) => JSON.parse(line) as HandlerFault);
}

export function account(expected: Iterable<string>, finishes: readonly Finish[]): Account {
  const wanted = new Set(expected);
  const seen = new Map<string, number>();
  let unexpected = 0;
  for (const finish of finishes) {
    if (!wanted.has(finish.h)) unexpected++;
    else seen.set(finish.h, (seen.get(finish.h) ?? 0) + 1);
  }
  let duplicates = 0;
  const duplicated: string[] = [];
  for (const [h, count] of seen) {
    duplicates += count - 1;
    if (count > 1) duplicated.push(h);
  }
  const lost = [...wanted].filter((h) => !seen.has(h));
  return { expected: wanted.size, handled: seen.size, lost, duplicates, duplicated, unexpected };
}

/** Waits until every expected id has finished at least once; resolves the whole record. */
export async function waitAllFinished(
  recorder: Client,
  expected: Iterable<string>,
  timeoutMs: number,
): Promise<Finish[]> {
  const wanted = new Set(expected);
  let last: Finish[] = [];
  try {
    return await waitFor(
      `${wanted.size} messages finished`,
      async () => {
        last = await readFinishes(recorder);
        return account(wanted, last).lost.length === 0 ? last : undefined;
      },
      timeoutMs,
      200,
    );
  } catch (error) {
    const missing = account(wanted, last).lost;
    const shown = missing
      .slice(0, 5)
      .map((h) => `${h.slice(0, 24)}${h.length > 24 ? '…' : ''} (${h.length / 2} bytes)`);
    throw new Error(
      `${(error as Error).message}: ${missing.length} never finished, e.g. ${shown.join(', ')}`,
    );
  }
}

/**
 * The suite's property after a fault: every acknowledged id finishes (waited for up to a
 * minute), and only ids leased at the fault run twice, no more of them than were leased.
 */
export async function expectNoneLost(
  recorder: Client,
  acked: string[],
  leased: ReadonlySet<string>,
): Promise<{ finishes: Finish[]; result: Account }> {
  const finishes = await waitAllFinished(recorder, acked, 60_000);
  const result = account(acked, finishes);
  expect(result.lost).toEqual([]);
  expect(result.duplicated.filter((h) => !leased.has(h))).toEqual([]);
  expect(result.duplicates).toBeLessThanOrEqual(leased.size);
  return { finishes, result };
}

/**
 * Waits until every expected id has finished, or `timeoutMs` passed; resolves the record either
 * way, for a test that wants to say more about what never finished than waitAllFinished does.
 */
export async function finishesWithin(
  recorder: Client,
  expected: Iterable<string>,
  timeoutMs: number,
): Promise<Finish[]> {
  return waitAllFinished(recorder, expected, timeoutMs).catch(() => readFinishes(recorder));
}

/** The leased messages right now (hex ids), over every group: read from the active sets. */
export async function leasedIds(client: Client, prefix: string, groups: number) {
  const lists = await Promise.all(
    Array.from({ length: groups }, (_, g) =>
      // Leases only: the placeholder at +inf is no lease (format 7).
      client.zrangebyscoreBuffer(groupKeys(prefix, g)[2] as string, '-inf', '(+inf'),
    ),
  );
  return new Set(lists.flat().map((id) => id.toString('hex')));
}

/** Each group's lease-token counter right now (0 before its first claim). */
export async function tokenMarks(client: Client, prefix: string, groups: number) {
  return Promise.all(
    Array.from({ length: groups }, async (_, g) =>
      Number((await client.get(keyOf(prefix, g, 'tok'))) ?? 0),
    ),
  );
}

/**
 * The earliest start of a message claimed after the marks were read, in `groups` (default all)
 * and not before `notBefore` (when nothing could be claimed until then, e.g. Redis was down):
 * the moment the queue worked again after a fault.
 */
export function firstClaimedAfter(
  finishes: readonly Finish[],
  marks: readonly number[],
  groups?: readonly number[],
  notBefore = 0,
): number {
  let first = Number.POSITIVE_INFINITY;
  for (const finish of finishes) {
    if (groups && !groups.includes(finish.g)) continue;
    if (finish.k > (marks[finish.g] ?? 0) && finish.s >= notBefore && finish.s < first) {
      first = finish.s;
    }
  }
  return first;
}

/** The last finish of any of `ids` (hex): when the last of them was back and done. */
export function lastFinishOf(finishes: readonly Finish[], ids: ReadonlySet<string>): number {
  let last = 0;
  for (const finish of finishes) if (ids.has(finish.h) && finish.t > last) last = finish.t;
  return last;
}
