// The key layout. Every key of group g shares one Redis Cluster hash slot:
// the delayed set keeps the plain name `<prefix>:<g>` (a key without braces
// hashes its whole name) and the others wrap that name in braces.

export const KEY_NAMES = [
  'delayed', // zset id → due time (in the queue's score unit); other programs may ZADD here
  'ready', // zset, score = priority, member = due ms (11 hex digits) + id: see lib.lua
  'active', // zset id → lease expiry (ms)
  'dead', // zset id → time it died (ms)
  'msg', // hash id → record (header + body); raw members get a header-only record when leased
  'due', // hash id → due ms (ready), or "<due ms>/<lease token>" (active)
  'pri', // hash id → priority, only for priorities other than 0
  'att', // hash id → failed attempts so far
  'err', // hash id → last error
  'reason', // hash id → why it is a dead letter
  'seq', // counter for generated ids (producers reserve blocks of it)
  'tok', // counter for lease tokens
  'wake', // list holding at most one token: wakes an idle consumer
  'next', // string: when a consumer will look at the group anyway (ms); absent = nobody waits on a time
  'paused', // string present while the group is paused: claims lease nothing
  'big', // hash id → record bytes, only for records over 1 KiB: claims size their reads by it
  'claims', // zset claim id → lease expiry: the claims remembered in `claimed`
  'claimed', // hash claim id → the batch it leased, until its reply arrived (see claim.lua)
  'renamed', // hash generated id → the id add.lua gave its message instead (the id was taken), and '>' .. that id → the first: a retried add finds its message
  'spills', // zset nonce → when written (ms): spilled body keys no add has kept yet (spill.ts)
  'done', // zset id → when it finished (ms): the kept history, oldest first (lua/history.lua)
  'hist', // hash id → the finished job: attempts, due, duration, result (lua/history.lua)
  'fin', // stream: the group's events, an entry per call and type (lua/events.lua; waitFor reads it)
  'schedules', // hash: each schedule's state and record template (lua/schedule-lib.lua: KEYS[24])
  'dedupe', // zset caller id → when its dedupe window ends (ms): lua/dedupe.lua, KEYS[25]
  'pre', // hash id → the start of a record over 2 KiB, what a page of previews reads (lua/previews.lua, KEYS[26])
  'format', // string: the format of the group's data; scripts refuse a newer one (lua/format-guard.lua, KEYS[27])
  'progress', // hash id → "<lines logged>|<progress JSON>" of jobs that reported; their lines in lists `{prefix:g}:log:<id>` (lua/reports.lua)
  // Flows (lua/flow-lib.lua, src/queue/flows/): KEYS[29..32]
  'waiting', // zset parent id → when added (ms): flow parents waiting for their children
  'flow', // hash: each parent's flow data, `<parent>:<n|c|d|u|r:<child>>` (lua/flow-lib.lua)
  'outbox', // hash child id → "<parent ref>\n<outcome>": outcomes for parents in other slots
  'flowends', // zset parent id → when it ended (ms): its flow data goes with its record
] as const;

export type KeyName = (typeof KEY_NAMES)[number];

/** The group's keys, in the order every Lua script expects them (lib.lua). */
export function groupKeys(prefix: string, group: number): string[] {
  const base = `${prefix}:${group}`;
  return KEY_NAMES.map((name) => (name === 'delayed' ? base : `{${base}}:${name}`));
}

export function keyOf(prefix: string, group: number, name: KeyName): string {
  return groupKeys(prefix, group)[KEY_NAMES.indexOf(name)] as string;
}

/**
 * Generated ids: "<group>:<length letter><base36 number>". The letter (a = 1 digit, b = 2, …)
 * makes text order equal number order, so ids one producer generates sort in the order it
 * added them (the tie-break among messages due in the same millisecond). Caller ids may not
 * take this form, so the two can never collide.
 */
export const GENERATED_ID = /^(\d+):[a-k][0-9a-z]+$/;

export function generatedId(group: number, n: number): string {
  const digits = n.toString(36);
  return `${group}:${String.fromCharCode(96 + digits.length)}${digits}`;
}

/**
 * A field the msg, due and pri hashes always hold, so Redis keeps them hashtables (see
 * lib.lua): never an id skyq makes, and not valid UTF-8, so no producer's text either.
 */
export const KEEP_FIELD = Buffer.from('\xffskyq:keep-hashtable', 'latin1');

/** The active set's placeholder member (format 7, lib.lua KEEP_MEMBER): keeps it a skiplist. */
export const KEEP_MEMBER = Buffer.concat([KEEP_FIELD, Buffer.from('-'.repeat(80))]);

/** FNV-1a over UTF-8: stable across processes and versions. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * The group an id lives in when the caller did not name one: generated ids
 * carry it (`3:c1kz`), any other id is hashed. Lookups try this group first.
 */
export function homeGroup(id: string, groups: number): number {
  const match = GENERATED_ID.exec(id);
  if (match) {
    const group = Number(match[1]);
    if (group < groups) return group;
  }
  return hashString(id) % groups;
}
