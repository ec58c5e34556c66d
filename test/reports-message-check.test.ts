// queue.progress() and queue.log() given an id (or nothing) in place of a claimed message: one
// line that says a message is wanted, not that some group number is wrong. Real redis-server.
import { expect, it } from 'vitest';
import type { Message } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();

it('refuse an id or nothing in place of the message, naming the message', async () => {
  const q = await redis.queue({ groups: 2 });
  const wanted = 'message: must be a message claimed from this queue';
  for (const notMessage of ['0:some-id', undefined, null, 7]) {
    const message = notMessage as unknown as Message;
    await expect(q.progress(message, 50)).rejects.toThrow(wanted);
    await expect(q.log(message, 'a line')).rejects.toThrow(wanted);
  }
  // A message-like object of another queue's layout still names its group.
  await expect(q.progress({ group: 9 } as unknown as Message, 1)).rejects.toThrow(
    'message.group: must be a group number from 0 to 1 (got 9)',
  );
});
