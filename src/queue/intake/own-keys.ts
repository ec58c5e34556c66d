// The keys no intake may take as its source: skyq's own for the queue's prefix (docs/keys.md).
// An intake moves everything out of its source, so one on a group's dead set would turn its
// dead letters into new messages and orphan their reasons; on a registry it fails once a
// minute with WRONGTYPE. Only the key shapes skyq writes are refused, not every name that
// starts with the prefix: other programs' lists are often named after it (`task_group:inbox`).
import { errors } from '../../base/errors.js';

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The groups' sorted sets, `<prefix>:<g>`: consumed where they lie. */
const groupSet = (p: string) => new RegExp(`^${p}:\\d+$`);

/**
 * The rest: every key in braces after the prefix (each group's slot `{<prefix>:<g>}:…`, the
 * rate limits' `{<prefix>:rate}:…`, the intake registry `{<prefix>:intake}:…`), the launchers'
 * figures and the format, and the holding lists, which live in their source's slot
 * (`{<tag>}:<prefix>:intake:<launcher>…`, holding.ts).
 */
const ownKey = (p: string) =>
  new RegExp(`^(?:\\{${p}:|${p}:(?:launchers|format)$|${p}:launcher:|\\{[^}]*\\}:${p}:intake:)`);

/** Throws when `key` is one of skyq's own keys for `prefix`; `field` names where it was given. */
export function refuseOwnKey(field: string, prefix: string, key: string): void {
  const p = literal(prefix);
  if (groupSet(p).test(key)) {
    throw errors.invalidOption(
      field,
      "is one of skyq's own groups, which are consumed where they lie without an intake",
      key,
    );
  }
  if (ownKey(p).test(key)) {
    throw errors.invalidOption(
      field,
      `is one of skyq's own keys for prefix ${prefix} (docs/keys.md): an intake would empty it`,
      key,
    );
  }
}
