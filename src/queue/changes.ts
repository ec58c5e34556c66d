// Changes made from outside a consumer: cancel or reschedule a waiting message, pause or resume
// groups. Apart from queue.ts so the class stays its API; each change is one script call on the
// group where the message (or the pause flag) lives, run through Queue.run.
import { errors } from '../base/errors.js';
import type { ScriptName } from '../redis/scripts.js';
import { dueArgument, type RescheduleOptions } from './add-options.js';
import type { QueueConfig } from './config.js';
import { onFirstGroup } from './first-group.js';
import { cancelIn } from './flows/cancel.js';
import type { Flows } from './flows/flows.js';
import type { Args } from './group-scripts.js';
import { checkGroup, checkObject, rejectUnknown } from './options.js';
import { textOf } from './record-read.js';

/** What a change needs of its Queue: the settings, and run() (looked up at each call). */
interface Runner {
  readonly config: QueueConfig;
  run(name: ScriptName, group: number, args: Args): Promise<unknown>;
}

/** See Queue.cancel. */
export function cancelMessage(
  queue: Runner,
  flows: Flows<unknown>,
  id: string | Buffer,
  options: { group?: number } | undefined,
): Promise<boolean> {
  const events = queue.config.events ? '1' : '';
  const run = (group: number, key: string | Buffer, mode: string, parent?: string) =>
    queue.run('cancel', group, [
      key,
      events,
      ...(mode === '' ? [] : [mode]),
      ...(parent ? [parent] : []),
    ]);
  return onFirstGroup(queue.config.groups, id, options, (group, key) =>
    cancelIn(run, flows, group, key),
  );
}

/** See Queue.reschedule. */
export function rescheduleMessage(
  queue: Runner,
  id: string | Buffer,
  options: RescheduleOptions,
): Promise<boolean> {
  const { delay, runAt, group, ...rest } = checkObject('options', options);
  rejectUnknown('', rest);
  if (delay === undefined && runAt === undefined)
    throw errors.invalidOption('delay', 'give delay or runAt');
  const when = dueArgument(delay, runAt);
  const { unitMs, events, groups } = queue.config;
  return onFirstGroup(groups, id, { group }, async (g, key) => {
    const moved = await queue.run('reschedule', g, [unitMs, key, when, events ? '1' : '']);
    if (moved === -1) throw pushedBack(typeof key === 'string' ? key : textOf(key));
    return Boolean(moved);
  });
}

/**
 * reschedule.lua refused to move a schedule's pending occurrence past its grid time: the
 * schedule adds its next occurrence only when this one runs, so it would wait with it.
 */
function pushedBack(id: string): Error {
  const schedule = /^schedule:(.+):\d+$/.exec(id)?.[1];
  return errors.invalidOption(
    'id',
    `is schedule ${schedule}'s next occurrence, which can run sooner but not later: the schedule would wait for it; to change when ${schedule} runs, upsert it`,
    id,
  );
}

/** Queue.pause and resume: the groups whose flag changed. */
export async function setPaused(
  queue: Runner,
  state: 'on' | 'off',
  group: number | undefined,
): Promise<number[]> {
  const { groups: count } = queue.config;
  const groups =
    group === undefined
      ? Array.from({ length: count }, (_, g) => g)
      : [checkGroup('group', group, count)];
  const changed = await Promise.all(groups.map((g) => queue.run('pause', g, [state])));
  return groups.filter((_, i) => changed[i] === 1);
}
