// A dead actor thread's leases, handed back at once by its launcher (on the coordinator's
// connection) with the reason the thread died. Each comes back counting an attempt, as a lease
// that ran out would: the job that killed the thread cannot be told from the others beside it.
// Its last error says the thread died and why, and claim.lua names that death in the dead
// letter of one that was on its last attempt. Only leases the dead thread's token still holds
// are touched (release.lua): one another consumer took since is left alone.
import { redactText } from '../base/redact.js';
import type { Queue } from '../queue/queue.js';
import { readThrown } from '../queue/thrown.js';
import { mirroredLeases } from './lease-mirror.js';
import type { Logger } from './logger.js';

/** How a handed-back job's last error begins: claim-lib.lua knows the death by it. */
export const THREAD_DIED = 'its actor thread died';
/** A reason's first line, cut: a stack or a long message stays in the launcher's log. */
const REASON_CHARS = 200;
/** Most ids one release call names: a call's cost follows them. */
const IDS_PER_CALL = 500;

/** The error kept with each job of a thread that died of `reason`: one short line, no password. */
export function diedError(reason: string): string {
  const line = redactText(reason.split('\n', 1)[0] ?? '').trim();
  const short = line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS - 1)}…` : line;
  return short === '' ? THREAD_DIED : `${THREAD_DIED}: ${short}`;
}

/**
 * Hands back what the mirror `buffer` of a dead actor thread of `group` held; resolves with
 * how many leases were still its own.
 */
export async function handBack(
  queue: Queue,
  group: number,
  buffer: SharedArrayBuffer,
  reason: string,
): Promise<number> {
  const error = diedError(reason);
  const head = (): (string | number | Buffer)[] => [queue.config.unitMs, '1', error];
  let args = head();
  let named = 0;
  let released = 0;
  const send = async () => {
    if (named > 0) released += (await queue.run('release', group, args)) as number;
    args = head();
    named = 0;
  };
  for (const { token, ids } of mirroredLeases(buffer)) {
    for (let at = 0; at < ids.length; ) {
      const part = ids.slice(at, at + IDS_PER_CALL - named);
      args.push(token, String(part.length), ...part);
      named += part.length;
      at += part.length;
      if (named >= IDS_PER_CALL) await send();
    }
  }
  await send();
  return released;
}

/** The launcher's line for a hand-back (`call`): how many leases came back at once, or why none. */
export async function logHandBack(log: Logger, group: number, call: Promise<number>) {
  try {
    const count = await call;
    log.warn(
      { event: 'handed-back', group, count },
      `actor ${group}'s dead thread: ${count} leases handed back`,
    );
  } catch (error) {
    const err = redactText(readThrown(error).message);
    const line = `actor ${group}'s dead thread: leases not handed back (they come back when they run out)`;
    log.warn({ event: 'hand-back-failed', group, err }, line);
  }
}
