/**
 * flows.children and flows.parent name what is wrong with their input: a JavaScript caller
 * passing the id alone (`flows.children('report-1')`) got "TypeError: undefined is not iterable"
 * from deep in the script runner, and a group out of range the same.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { freshPrefix } from './helpers/queue.js';
import { useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();
let queue: Queue | undefined;
afterAll(() => queue?.close());

describe('flows.children and flows.parent input', () => {
  it('refuse what they cannot read with a one-line ERR_SKYQ_INVALID_OPTION', async () => {
    queue = new Queue({ redis: redis.server.url, prefix: freshPrefix('flowin'), groups: 2 });
    const flows = queue.flows;
    const bad: [() => Promise<unknown>, string][] = [
      [() => flows.children('report-1' as never), 'message: must be an object (got "report-1")'],
      [() => flows.children({ id: 'report-1' } as never), 'message.group: must be a group number'],
      [() => flows.children({ id: 'report-1', group: 2 }), 'message.group: must be a group number'],
      [() => flows.children({ group: 0 } as never), 'message.id: must be a string or a Buffer'],
      [() => flows.parent('report-1', 7), 'group: must be a group number from 0 to 1 (got 7)'],
    ];
    for (const [call, message] of bad) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'ERR_SKYQ_INVALID_OPTION' });
      expect((error as Error).message).toContain(message);
    }
    expect(await flows.children({ id: 'report-1', group: 1 })).toEqual([]);
    expect(await flows.parent('report-1', 1)).toBeNull();
  });
});
