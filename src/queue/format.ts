// The data format version of a prefix's keys, in one key `<prefix>:format` beside the groups.
// Every change to records, keys or scripts that older code could misread bumps FORMAT_VERSION
// here (and says what changed below). A client raises the stored version to its own (it reads
// every older format, so data written before keeps working) and refuses to run against a newer
// one it does not know, instead of misreading or corrupting what that one wrote.
//
// Versions:
//   1 (none stored) records `<enq>|<priority>|<attempts>|<backoff>|<kind><body>`
//   2 records may carry tags after the last bar: a name (`n`), a schedule occurrence (`p`);
//     the schedules hash `{<prefix>:<g>}:schedules` (src/queue/schedules/, lua/schedule-lib.lua)
//   3 a spilled record's nonce may be `<ident>.<attempt>` (src/queue/spill.ts), and its body
//     key never has an expiry: bodies no add kept yet are listed in `{<prefix>:<g>}:spills`;
//     `{<prefix>:<g>}:renamed` remembers generated ids add.lua had to rename. Format-2
//     stubs (a bare nonce, the key made permanent by their add) read as before.
//   4 finished jobs are kept (src/queue/history/, lua/history.lua): their records stay in the
//     msg hash, listed in `{<prefix>:<g>}:done` with `:hist` entries, trimmed only by code that
//     knows them; `{<prefix>:<g>}:fin` tells waiters who finished. Older code would leave kept
//     records behind for good, so it must refuse this data
//   5 the fin stream is the group's event stream (lua/events.lua): an entry per call and type
//     of event, marked by a first field that is not valid UTF-8; format-4 entries (id → done |
//     dead) read as before. Older code would take the new entries' fields for ids
//   6 dedupe windows: `{<prefix>:<g>}:dedupe`, caller id → when its window ends (lua/dedupe.lua).
//     Older code would add an id again inside its window
//   7 the active set holds a placeholder member at +inf (lua/lib.lua KEEP_MEMBER), so Redis keeps
//     it a skiplist: an ack empties it and the next claim's ZADDs into a small listpack parsed
//     every score before them. Older code would count, list and time leases with it
//   8 every script knows its format and refuses newer data (lua/format-guard.lua): each slot
//     keeps its own copy of the format (`{<prefix>:<g>}:format`, `{<prefix>:rate}:format`,
//     `{<prefix>:intake}:format`), which every call reads (one GET) and raises when missing.
//     Records over 2 KiB keep their start in `{<prefix>:<g>}:pre` (lua/previews.lua), which
//     older code would leave behind or leave stale. The id counters stay above Redis's clock
//     (lua/id-block.lua); `cancelled` is always on the event stream. Event entries of a later
//     format will carry it in their mark (`\xffe<format>`): readers refuse such entries.
//     Messages a per-name rate limit holds back wait in the ready set in their name's band of
//     scores (band × 2^21 + priority), named in `{<prefix>:<g>}:held` (lua/lib-held.lua):
//     older code would lease them as the lowest priorities, unlimited, and leave the hash.
//     Rate-limit buckets keep `hold` (format 7's `held` is ignored).
//     A schedule id's placement (src/queue/schedules/placement.ts): its home group's schedules
//     hash keeps `g:<id>` (the group it lives in and a generation) and `gen`; a state carries
//     the `gen` it was written under, and a group fences one with `x:<id>`. Older code would
//     write a second schedule of the id in another group. Format-7 schedules (no marker, no
//     gen) are found in any group, adopted by their next upsert and removed wherever they are.
//     An intake holding list may hold a sorted set's members (zsetIntake, lua/intake-zmove.lua):
//     its entry in `{<prefix>:intake}:holding` names the set's `scoreUnit`, and its items are
//     `<due ms>:<member>` (src/queue/intake/zset-items.ts). Older code adopting such a list
//     after a crash would add each item, due time and all, as a body due now
//     Running jobs' progress and log lines (lua/report.lua): `{<prefix>:<g>}:progress` (id →
//     "<lines logged>|<progress JSON>") and each job's last 100 lines in a list
//     `{<prefix>:<g>}:log:<id>`, both forgotten with the record (lib-ids.lua forgetReports);
//     `progress` entries on the event stream (meta: the values as one JSON array). Older code
//     would leave both behind when it forgets a record (readers of format 5 on skip the
//     entries: a type they do not know is not theirs to read). Format-7 data has neither.
//     A failed job's `err` field may keep its handler's stack after the message,
//     `<message>\xff<stack>` (lua/fail.lua, src/queue/error-stack.ts; at most 8 KiB): older
//     code would show the stack as part of the error. A format-7 value (no 0xff) reads as the
//     message alone, with no stack.
//     Flows (src/queue/flows/, lua/flow-lib.lua): a record may carry two more tags after the
//     name and schedule ones, `f<bytes>:<group>:<o|m>:<parent id>` on a flow child and
//     `c<bytes>:<children>` on a flow parent; four keys per group: `{<prefix>:<g>}:waiting`
//     (parents waiting for their children), `:flow` (each parent's children, count and
//     outcomes), `:outbox` (outcomes for parents in other slots) and `:flowends` (ended parents
//     whose flow data goes with their record). Older code would take a flow member's tag for
//     an unknown body kind and dead-letter it, never release a waiting parent nor see it
//     (get, list, cancel), and neither record nor relay a child's outcome. Format-7 data has
//     no flows: no tag, no such key, and reads as before
import { errors } from '../base/errors.js';
import { FORMAT_VERSION } from '../base/format-version.js';
import { keyOf } from '../base/keys.js';

export { FORMAT_VERSION };

export const formatKey = (prefix: string): string => `${prefix}:format`;

/** Every key that holds the format: the prefix's own, then each slot's copy. */
export function formatKeys(prefix: string, groups: number): string[] {
  const slots = Array.from({ length: groups }, (_, g) => keyOf(prefix, g, 'format'));
  return [formatKey(prefix), ...slots, `{${prefix}:rate}:format`, `{${prefix}:intake}:format`];
}

/** Runs format.lua on one key (raising it or not): returns the version stored before (0 = none). */
export type RunFormatScript = (key: string, version: number, raise: boolean) => Promise<unknown>;

/**
 * Checks the stored formats against ours and raises each to ours (a missing one is written
 * back), unless `raise` is false (a reader: config.ts raiseFormat); throws a SkyqError when any
 * was written by a newer skyq.
 */
export async function ensureFormat(
  run: RunFormatScript,
  prefix: string,
  groups: number,
  raise = true,
): Promise<number> {
  const keys = formatKeys(prefix, groups);
  const before = (await Promise.all(keys.map((key) => run(key, FORMAT_VERSION, raise)))).map(
    Number,
  );
  const newest = Math.max(...before);
  if (newest > FORMAT_VERSION)
    throw errors.formatTooNew(keys[before.indexOf(newest)] as string, newest, FORMAT_VERSION);
  return before[0] as number;
}
