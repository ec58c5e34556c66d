// `skyq start --intake high,normal,low`: the lists whose items the launcher moves into
// skyq, earliest first, all into the first list's group (its name hashed); `normal=3` sends
// a list's items to group 3 instead, where the order between lists no longer holds. So that
// `=` always means a group, a list named here holds no `=` (nor `,`): `normal=x` is refused,
// not read as a list of that name (startActors' `{ list }` can name any list).
// `--zset-intake JOB_MESSAGE_QUEUE:s,seta:ms`: sorted sets consumed as their members fall due.
import { errors } from '../base/errors.js';
import type { ScoreUnit } from '../queue/config.js';
import type { IntakeListOption, IntakeSpec } from '../queue/intake/spec.js';
import type { ZsetIntakeOption } from '../queue/intake/zset-spec.js';
import { checkGroup } from '../queue/options.js';

export const INTAKE_HELP =
  'move items other programs LPUSH onto these Redis lists into skyq, earliest list first ' +
  "(as BRPOP high normal low takes them), e.g. high,normal,low, all into the first list's " +
  'group; normal=3 puts a list in group 3 (the order between lists holds within a group); ' +
  'a name here holds no "=" or ","';

/** The start line for an intake spread over several groups (null when it is in one). */
export function intakeGroupsLine(specs: readonly IntakeSpec[]): string | null {
  const groups = [...new Set(specs.map((spec) => spec.group))];
  if (groups.length < 2) return null;
  const named = `${groups.slice(0, -1).join(', ')} and ${groups.at(-1)}`;
  return `skyq: intake lists go to groups ${named}: an earlier list goes first only within a group`;
}

/** `high,normal=3`, for a queue of `groups` groups: everything after the first `=` is a group. */
export function parseIntakeFlag(text: string, groups: number): IntakeListOption[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.some((part) => part === '')) {
    throw errors.invalidOption('intake', 'expected list names separated by commas', text);
  }
  return parts.map((part, index) => {
    const equals = part.indexOf('=');
    if (equals < 0) return { list: part };
    const number = part.slice(equals + 1).trim();
    const group = /^\d+$/.test(number) ? Number(number) : number;
    return {
      list: part.slice(0, equals).trim(),
      group: checkGroup(`intake[${index}].group`, group, groups),
    };
  });
}

export const ZSET_INTAKE_HELP =
  'consume sorted sets other programs ZADD to as their delay queue, KEY:UNIT with the unit ' +
  'of their scores (s, cs or ms), e.g. JOB_MESSAGE_QUEUE:s,seta:ms; a member becomes a ' +
  "message when it falls due; seta:ms=3 puts a set's members in group 3 (default: its name hashed)";

/** `JOB_MESSAGE_QUEUE:s,seta:ms=3`: the unit follows the last colon (a key may hold colons). */
export function parseZsetIntakeFlag(text: string): ZsetIntakeOption[] {
  const parts = text.split(',').map((part) => part.trim());
  return parts.map((part) => {
    const named = /^(.+):(s|cs|ms)(?:=(\d+))?$/.exec(part);
    if (!named) {
      throw errors.invalidOption(
        'zset-intake',
        'expected KEY:UNIT (the unit s, cs or ms), e.g. JOB_MESSAGE_QUEUE:s,seta:ms',
        text,
      );
    }
    const [, key, unit, group] = named as unknown as [string, string, ScoreUnit, string?];
    return { key, scoreUnit: unit, ...(group !== undefined ? { group: Number(group) } : {}) };
  });
}
