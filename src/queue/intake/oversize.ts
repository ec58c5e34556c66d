// An intake item over maxBodyBytes is never dropped: it becomes a dead letter of
// its group, with the reason, under the id its position gave it, and keeps its
// exact bytes (a record over 64 KiB goes to its own body key first, as any big
// record does: spill.ts), so an operator can read, retry or purge it.
import { isUtf8 } from 'node:buffer';
import { keyOf } from '../../base/keys.js';
import type { Queue } from '../queue.js';
import { headerOf, recordOf } from '../record.js';
import { nextAttempt, SPILL_BYTES, spill, storeSpills } from '../spill.js';
import type { HoldingRef } from './holding.js';

export async function deadLetterOversize(
  queue: Queue,
  ref: HoldingRef,
  id: string,
  item: Buffer,
  reason: string,
): Promise<boolean> {
  const { config } = queue;
  const header = headerOf({
    enqueuedAt: Date.now(),
    priority: ref.priority,
    maxAttempts: config.attempts,
    backoff: config.backoff,
  });
  const kind = isUtf8(item) ? 's' : 'b';
  const record = recordOf(header, { kind, data: item, bytes: item.length });
  const bytes = header.length + 1 + item.length;
  let stored: string | Buffer = record;
  let nonce = '';
  if (bytes > SPILL_BYTES) {
    const attempt = nextAttempt(spill(header, record, bytes).spill);
    const spills = keyOf(config.prefix, ref.group, 'spills');
    const now = await queue.clock(ref.group).now();
    await storeSpills(queue.client, config.prefix, ref.group, spills, [attempt], now);
    stored = attempt.stub;
    nonce = attempt.nonce;
  }
  const added = await queue.run('intake-dead', ref.group, [id, stored, reason, bytes, nonce]);
  return added === 1;
}
