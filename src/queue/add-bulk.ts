// addBulk: checked messages go out in one add.lua call per group and chunk.
// Chunks are cut by count and by bytes, so neither Redis's query buffer nor
// one script's run time grows with big bodies. Calls to different groups are
// independent: when some fail, the caller learns exactly which items went in.

import { performance } from 'node:perf_hooks';
import { AddBulkError, errors, SkyqError } from '../base/errors.js';
import { keyOf } from '../base/keys.js';
import type { RedisClient } from '../redis/connection.js';
import type { PreparedMessage } from './add-options.js';
import type { QueueConfig } from './config.js';
import { IdBlocks } from './id-blocks.js';
import { nextAttempt, type SpillAttempt, storeSpills } from './spill.js';

/** Most messages per add.lua call: big enough to amortise a call, small enough to stay short. */
const CHUNK_MESSAGES = 1000;
/** Most bytes per add.lua call: a few ms of copying in Redis, far below its query buffer. */
const CHUNK_BYTES = 1024 * 1024;

export interface AddContext {
  config: QueueConfig;
  idBlocks: IdBlocks;
  /** Redis time in ms at the performance.now() reading `at`, on `group`'s server */
  now(group: number, at: number): Promise<number>;
  run(group: number, args: (string | Buffer)[]): Promise<unknown>;
  /** writes spilled records beside the group's msg hash (spill.ts), before the add */
  spill(group: number, spills: SpillAttempt[], now: number): Promise<unknown>;
  /** deletes the body keys of these nonces that no add kept (spill-drop.lua) */
  dropSpills(group: number, nonces: string[]): Promise<unknown>;
  /** the error a reader should see (reserving ids and reading the clock are plain commands) */
  explain(error: unknown): unknown;
}

/** A Queue's AddContext: ids reserved from each group's counter, spills written beside it. */
export function addContextOf(
  client: RedisClient,
  config: QueueConfig,
  parts: Pick<AddContext, 'now' | 'explain'> & {
    run(
      name: 'add' | 'spill-drop' | 'id-block',
      group: number,
      args: (string | number | Buffer)[],
    ): Promise<unknown>;
  },
): AddContext {
  const { prefix } = config;
  const reserve = async (group: number, count: number) =>
    Number(await parts.run('id-block', group, [count]));
  return {
    config,
    idBlocks: new IdBlocks(reserve),
    now: parts.now,
    run: (group, args) => parts.run('add', group, args),
    spill: (group, spills, now) =>
      storeSpills(client, prefix, group, keyOf(prefix, group, 'spills'), spills, now),
    dropSpills: (group, nonces) => parts.run('spill-drop', group, nonces),
    explain: parts.explain,
  };
}

/**
 * Adds `prepared`, giving generated ids to those without one. `ids` holds ids already given
 * (a retry): those are sent as 'r', which add.lua skips when they are there already.
 */
export async function addPrepared(
  context: AddContext,
  prepared: PreparedMessage[],
  given: (string | null)[] = [],
): Promise<string[]> {
  const ids: (string | null)[] = prepared.map((m, i) => given[i] ?? (m.callerId || null));
  const failures: { index: number; reason: string }[] = [];
  let cause: unknown;
  // Every delay of one call counts from this instant, whichever chunk and group it goes in: a
  // pause between chunks (a GC, a busy core) must not reorder `delay: i` across groups. Exact
  // on one clock (a standalone or Sentinel server); a cluster's groups each read their own.
  const at = performance.now();
  await Promise.all(
    chunks(prepared).map(async (chunk) => {
      try {
        await sendChunk(context, prepared, chunk, ids, given, at);
      } catch (raw) {
        const error = context.explain(raw);
        cause ??= error;
        const reason = error instanceof Error ? error.message : String(error);
        for (const index of chunk) failures.push({ index, reason });
      }
    }),
  );
  if (failures.length === 0) return ids as string[];
  failures.sort((a, b) => a.index - b.index);
  const failed = new Set(failures.map((f) => f.index));
  const retry = async () => {
    const again = failures.map((f) => prepared[f.index] as PreparedMessage);
    const sent = await addPrepared(
      context,
      again,
      failures.map((f) => ids[f.index] ?? null),
    );
    const all = [...ids] as string[];
    failures.forEach((f, i) => {
      all[f.index] = sent[i] as string;
    });
    return all;
  };
  throw new AddBulkError(
    ids.map((id, i) => (failed.has(i) ? null : id)),
    failures,
    retry,
    cause,
  );
}

/**
 * What add() (one message) throws instead of addBulk's "1 of 1 items were not added": the
 * reason itself, as a SkyqError with its own code; a bare Redis reply (WRONGTYPE, OOM) becomes
 * ERR_SKYQ_REDIS with its first line.
 */
export function singleAddError(error: unknown): unknown {
  if (!(error instanceof AddBulkError)) return error;
  const cause = error.cause;
  if (cause instanceof SkyqError) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return errors.redis(message.split('\n')[0] ?? message, cause);
}

/** Messages with no group, key or id go to one group per this many (see spreadOverGroups). */
const SPREAD_SLICE = 100;

/**
 * Gives messages that named no group, key or id their groups, in turn from `next`: a call with
 * many cuts them in slices of at least SPREAD_SLICE over the following groups, so a small batch
 * stays one Redis call and a large one still keeps every actor busy. Returns the next start.
 */
export function spreadOverGroups(prepared: PreparedMessage[], groups: number, next: number) {
  const free = prepared.filter((message) => message.group === -1);
  if (free.length === 0) return next;
  const used = Math.min(groups, Math.max(1, Math.floor(free.length / SPREAD_SLICE)));
  const slice = Math.ceil(free.length / used);
  free.forEach((message, i) => {
    message.group = (next + Math.floor(i / slice)) % groups;
  });
  return (next + used) % groups;
}

/**
 * Whose turn it is among the groups, for messages and flow nodes that named none. Each
 * producer starts somewhere else, so many short-lived ones do not all fill group 0.
 */
export class GroupTurns {
  readonly #groups: number;
  #next: number;

  constructor(groups: number) {
    this.#groups = groups;
    this.#next = Math.floor(Math.random() * groups);
  }

  /** One group (a flow node's); the next one's turn after it. */
  next(): number {
    const group = this.#next;
    this.#next = (group + 1) % this.#groups;
    return group;
  }

  /** spreadOverGroups from this turn on. */
  spread(prepared: PreparedMessage[]): void {
    this.#next = spreadOverGroups(prepared, this.#groups, this.#next);
  }
}

/** Indexes of `prepared`, per group, cut by count and bytes. */
function chunks(prepared: PreparedMessage[]): number[][] {
  const open = new Map<number, { indexes: number[]; bytes: number }>();
  const out: number[][] = [];
  prepared.forEach((message, index) => {
    let chunk = open.get(message.group);
    if (
      chunk &&
      (chunk.indexes.length >= CHUNK_MESSAGES || chunk.bytes + message.bytes > CHUNK_BYTES)
    ) {
      out.push(chunk.indexes);
      chunk = undefined;
    }
    if (!chunk) {
      chunk = { indexes: [], bytes: 0 };
      open.set(message.group, chunk);
    }
    chunk.indexes.push(index);
    chunk.bytes += message.bytes;
  });
  for (const chunk of open.values()) out.push(chunk.indexes);
  return out;
}

async function sendChunk(
  context: AddContext,
  prepared: PreparedMessage[],
  chunk: number[],
  ids: (string | null)[],
  given: (string | null)[],
  at: number,
): Promise<void> {
  const group = (prepared[chunk[0] as number] as PreparedMessage).group;
  const wanted = chunk.filter((index) => ids[index] === null).length;
  const generated = wanted > 0 ? await context.idBlocks.take(group, wanted) : [];
  const now = await context.now(group, at);
  // Three per message (id, score, record): what add.lua must handle differently travels in
  // sections of its own, so the common message costs the fewest arguments to encode.
  const sections: Record<'g' | 'c' | 'r', number[]> = { g: [], c: [], r: [] };
  let next = 0;
  for (const index of chunk) {
    const message = prepared[index] as PreparedMessage;
    ids[index] ??= generated[next++] as string;
    // Caller ids are checked for duplicates; generated ones for a counter that went back.
    const kind = message.callerId ? 'c' : given[index] ? 'r' : 'g';
    sections[kind].push(index);
  }
  const order = [...sections.g, ...sections.c, ...sections.r];
  // Each send writes its bodies under nonces of its own (spill.ts); those of earlier sends
  // that no add kept go first: nothing refers to them.
  const earlier: string[] = [];
  const attempts = new Map<number, SpillAttempt>();
  for (const index of order) {
    const { spill } = prepared[index] as PreparedMessage;
    if (!spill) continue;
    earlier.push(...spill.nonces);
    attempts.set(index, nextAttempt(spill));
  }
  const spills = [...attempts.values()];
  if (earlier.length > 0) await context.dropSpills(group, earlier).catch(() => undefined);
  try {
    if (spills.length > 0) await context.spill(group, spills, now);
    await runChunk(context, prepared, group, now, order, sections, ids, attempts);
  } catch (error) {
    // The add failed, or its outcome is unknown: bodies it did not keep are of no use. If
    // it is still on its way, it finds them gone and fails too (add.lua), storing nothing.
    if (spills.length > 0) {
      const nonces = spills.map((s) => s.nonce);
      await context.dropSpills(group, nonces).catch(() => undefined);
    }
    throw error;
  }
}

async function runChunk(
  context: AddContext,
  prepared: PreparedMessage[],
  group: number,
  now: number,
  order: number[],
  sections: Record<'g' | 'c' | 'r', number[]>,
  ids: (string | null)[],
  attempts: Map<number, SpillAttempt>,
): Promise<void> {
  const unit = context.config.unitMs;
  const args: (string | Buffer)[] = [String(unit), '', `${sections.g.length}`];
  args.push(`${sections.c.length}`, `${sections.r.length}`, `${attempts.size}`);
  args.push(context.config.events ? '1' : '');
  const windows: string[] = [];
  for (const index of order) {
    const message = prepared[index] as PreparedMessage;
    if (message.dedupeMs > 0) windows.push(message.callerId, String(message.dedupeMs));
  }
  args.push(String(windows.length / 2));
  const HEAD = args.length;
  const priorities: string[] = [];
  const spilled: string[] = [];
  let earliest = Number.POSITIVE_INFINITY;
  for (const index of order) {
    const message = prepared[index] as PreparedMessage;
    const dueMs = 'runAt' in message.due ? message.due.runAt : now + message.due.delay;
    // Due now: '' (add.lua uses Redis's own now); later, or a past due time to keep (a
    // sorted-set intake's member, due since its score): the delayed-set score.
    let score = '';
    if (dueMs > now || (message.keepDue === true && dueMs > 0)) {
      score = String(unit === 1 ? dueMs : dueMs / unit);
      if (dueMs < earliest) earliest = dueMs;
    }
    const attempt = attempts.get(index);
    args.push(ids[index] as string, score, attempt ? attempt.stub : message.record);
    if (message.priority !== 0) priorities.push(ids[index] as string, String(message.priority));
    const bytes = String(message.spill?.bytes);
    if (attempt) spilled.push(String((args.length - HEAD) / 3), bytes, attempt.nonce);
  }
  for (const value of spilled) args.push(value);
  for (const value of windows) args.push(value);
  for (const value of priorities) args.push(value);
  if (earliest !== Number.POSITIVE_INFINITY) args[1] = String(earliest);
  const reply = (await context.run(group, args)) as number[] | (string | number)[];
  // Generated ids that were taken already came back renamed: the block they came from is stale.
  if (reply.length > 1) context.idBlocks.discard(group);
  for (let i = 1; i < reply.length; i += 2) {
    ids[order[Number(reply[i]) - 1] as number] = String(reply[i + 1]);
  }
}
