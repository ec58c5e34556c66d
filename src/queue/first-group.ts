// Finding the group an id lives in: the home group its id names or hashes to first (where it
// almost always is), then every other group at once (a caller id added with an explicit group).
import { homeGroup } from '../base/keys.js';
import { checkGroup, checkLookupId } from './options.js';
import { textOf } from './record-read.js';

/** Runs `attempt` on the id's home group, then on the others; true once one says true. */
export async function onFirstGroup(
  groups: number,
  id: string | Buffer,
  options: { group?: unknown } | undefined,
  attempt: (group: number, key: string | Buffer) => Promise<boolean>,
): Promise<boolean> {
  const key = checkLookupId('id', id);
  const named = options?.group;
  if (named !== undefined) return attempt(checkGroup('group', named, groups), key);
  const home = homeGroup(typeof key === 'string' ? key : textOf(key), groups);
  if (await attempt(home, key)) return true;
  const others = Array.from({ length: groups }, (_, g) => g).filter((g) => g !== home);
  return (await Promise.all(others.map((g) => attempt(g, key)))).some(Boolean);
}
