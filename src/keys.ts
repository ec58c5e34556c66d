// The key layout. Every key of group g shares one Redis Cluster hash slot:
// the delayed set keeps the plain name `<prefix>:<g>` (a key without braces
// hashes its whole name) and the others wrap that name in braces.

export const KEY_NAMES = [
  'delayed', // zset id → due time (in the queue's score unit)
  'ready', // zset id → priority * 2^33 + seq
  'active', // zset id → lease expiry (ms)
  'dead', // zset id → time it died (ms)
  'msg', // hash id → record
  'due', // hash id → due time (ms), for ready and active messages
  'att', // hash id → failed attempts so far
  'err', // hash id → last error
  'reason', // hash id → why it is a dead letter
  'seq', // counter for generated ids and ready order
  'wake', // list holding at most one token: wakes an idle consumer
  'paused', // string present while the group is paused: claims lease nothing
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

const GENERATED_ID = /^(\d+):[0-9a-z]+$/;

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
 * carry it (`3:1kz`), any other id is hashed. Lookups try this group first.
 */
export function homeGroup(id: string, groups: number): number {
  const match = GENERATED_ID.exec(id);
  if (match) {
    const group = Number(match[1]);
    if (group < groups) return group;
  }
  return hashString(id) % groups;
}
