// `skyq start --intake high,normal,low`: the lists whose items the launcher moves into
// skyq, earliest first; `high=3` sends a list's items to group 3 (default: its name hashed).
import { errors } from '../base/errors.js';
import type { IntakeListOption } from '../queue/intake/spec.js';

export const INTAKE_HELP =
  'move items other programs LPUSH onto these Redis lists into skyq, earliest list first ' +
  '(as BRPOP high normal low takes them), e.g. high,normal,low; high=3 puts a list in group 3';

export function parseIntakeFlag(text: string): IntakeListOption[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.some((part) => part === '')) {
    throw errors.invalidOption('intake', 'expected list names separated by commas', text);
  }
  return parts.map((part) => {
    const named = /^(.+)=(\d+)$/.exec(part);
    return named ? { list: named[1] as string, group: Number(named[2]) } : { list: part };
  });
}
