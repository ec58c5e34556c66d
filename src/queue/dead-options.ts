// The arguments of queue.deadLetters' calls, checked before anything is read or changed: a
// misspelt action once purged (anything but 'retry' was taken for 'purge'), so a malformed
// call is refused in one line naming what is wrong, and changes nothing.
import { errors } from '../base/errors.js';
import { checkLookupId, checkObject, rejectUnknown } from './options.js';

/** The script of act()'s action. */
export function scriptOf(action: unknown): 'dead-retry' | 'dead-purge' {
  if (action === 'retry') return 'dead-retry';
  if (action === 'purge') return 'dead-purge';
  throw errors.invalidOption('action', "must be 'retry' or 'purge'", action);
}

/** A selection's ids, each a string or a Buffer; undefined: all. */
export function checkIds(ids: unknown): (string | Buffer)[] | undefined {
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids)) {
    throw errors.invalidOption('ids', 'must be a list of ids (strings or Buffers)', ids);
  }
  return ids.map((id, i) => checkLookupId(`ids[${i}]`, id));
}

/**
 * A selection (retry, purge, act) or options (list, page) with only the `names` given. An
 * unknown one is refused: ignored, `{ id }` or `{ groups }` selected every dead letter, and a
 * purge deleted them all.
 */
export function checkKnown<K extends string>(
  field: string,
  value: unknown,
  names: readonly K[],
): Partial<Record<K, unknown>> {
  const checked = checkObject(field, value);
  const rest = Object.entries(checked).filter(
    ([name]) => !(names as readonly string[]).includes(name),
  );
  rejectUnknown('', Object.fromEntries(rest));
  return checked as Partial<Record<K, unknown>>;
}
