// Every API route refuses a malformed cursor, id, number or parameter with a 400 and one line
// naming it (issue 27, 2.8): `/api/dead?after=<garbage>` answered 200 with an empty page, since
// the route takes `cursor` and ignored the rest. A well-formed request to each route still works.
// The stand-alone dashboard on a real redis-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpHandle, serveDashboard } from '../src/http/index.js';
import { Queue } from '../src/index.js';
import { postJson } from './helpers/http.js';
import { freshPrefix } from './helpers/queue.js';
import { useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** [path, body (a POST) or undefined (a GET), what the one-line error starts with] */
type Case = [string, unknown, string];

describe('bad input on the API', () => {
  let handle: HttpHandle;
  let queue: Queue;
  let delayedCursor: string;

  beforeAll(async () => {
    const prefix = freshPrefix('bad');
    queue = new Queue({ redis: redis.server.url, prefix, groups: 2 });
    await queue.addBulk([
      { body: 1, options: { id: 'a', delay: 60_000 } },
      { body: 2, options: { id: 'b', delay: 60_000 } },
    ]);
    delayedCursor = (await queue.list('delayed', { limit: 1 })).cursor as string;
    handle = await serveDashboard(
      { redis: redis.server.url, prefix, groups: 2 },
      { listen: '127.0.0.1:0' },
    );
  });
  afterAll(async () => {
    await handle?.close();
    await queue?.close();
  });

  const send = async (path: string, body: unknown) => {
    const response =
      body === undefined
        ? await fetch(new URL(path, handle.url))
        : await postJson(handle.url, path, body);
    return { status: response.status, body: (await response.json()) as { error?: string } };
  };

  it('answers 400 and one line naming what is wrong, on every route', async () => {
    const cases: Case[] = [
      ['/api/overview?since=soon', undefined, 'since: must be a whole number ≥ 0 (got "soon")'],
      ['/api/overview?since=-1', undefined, 'since: must be a whole number'],
      ['/api/overview?sinse=1', undefined, 'sinse: is not a parameter of /api/overview'],
      [
        '/api/dead?after=garbage',
        undefined,
        'after: is not a parameter of /api/dead (it takes group, limit, cursor, order)',
      ],
      ['/api/dead?cursor=garbage', undefined, 'cursor: is not a cursor from a dead-letter page'],
      [
        `/api/dead?cursor=${delayedCursor}`,
        undefined,
        'cursor: is not a cursor from a dead-letter page',
      ],
      ['/api/dead?group=x', undefined, 'group: must be a whole number'],
      ['/api/dead?group=9', undefined, 'group: must be a group number from 0 to 1'],
      ['/api/dead?group=1&group=0', undefined, 'group: is given more than once'],
      ['/api/dead?limit=0', undefined, 'limit: must be between 1 and 500'],
      ['/api/dead?limit=501', undefined, 'limit: must be between 1 and 500'],
      ['/api/dead?limit=2.5', undefined, 'limit: must be a whole number'],
      ['/api/dead?limit=99999999999999999999', undefined, 'limit: must be a whole number'],
      ['/api/dead?order=sideways', undefined, 'order: must be one of newest, oldest'],
      ['/api/dead?offset=20', undefined, 'offset: is not a parameter of /api/dead'],
      [
        '/api/schedules?group=1',
        undefined,
        'group: is not a parameter of /api/schedules (it takes none)',
      ],
      ['/api/rate-limits?x=1', undefined, 'x: is not a parameter of /api/rate-limits'],
      [
        '/api/list?state=done&cursor=garbage',
        undefined,
        'cursor: is not a cursor from a done page',
      ],
      [
        `/api/list?state=dead&cursor=${delayedCursor}`,
        undefined,
        'cursor: is a cursor from a delayed page, not a dead one',
      ],
      [
        `/api/list?state=delayed&cursor=${delayedCursor}&order=newest`,
        undefined,
        'cursor: is the cursor of a page read oldest first',
      ],
      ['/api/list?state=done&order=up', undefined, 'order: must be one of newest, oldest'],
      ['/api/list?state=done&after=x', undefined, 'after: is not a parameter of /api/list'],
      ['/api/list?state=ready&limit=lots', undefined, 'limit: must be a whole number'],
      ['/api/list?state=ready&group=5', undefined, 'group: must be a group number from 0 to 1'],
      [
        '/api/list?state=sleeping',
        undefined,
        'state: must be one of delayed, ready, active, done, dead',
      ],
      ['/api/jobs/a?group=z', undefined, 'group: must be a whole number'],
      ['/api/jobs/a?group=7', undefined, 'group: must be a group number from 0 to 1'],
      ['/api/jobs/a?idBase64=%21%21', undefined, 'idBase64: must be an id’s bytes in base64'],
      [
        '/api/jobs/a?id=b',
        undefined,
        'id: is not a parameter of /api/jobs/a (it takes group, idBase64)',
      ],
      [
        '/api/dead/retry',
        { ids: [{ base64: '!!' }] },
        'ids[0].base64: must be an id’s bytes in base64',
      ],
      ['/api/dead/retry', { ids: [5] }, 'ids[0]: must be a string or { base64 }'],
      ['/api/dead/retry', { ids: ['a'], group: 'x' }, 'group: must be a group number'],
      ['/api/dead/purge', { all: true, group: 1.5 }, 'group: must be a group number from 0 to 1'],
      [
        '/api/dead/purge',
        { all: true, everything: true },
        'everything: is not a field of this request',
      ],
      [
        '/api/dead/retry?all=1',
        { all: true },
        'all: is not a parameter of /api/dead/retry (it takes none)',
      ],
      ['/api/jobs/a/cancel', { group: 'one' }, 'group: must be a group number'],
      ['/api/jobs/a/cancel', { group: 3 }, 'group: must be a group number from 0 to 1'],
      ['/api/jobs/a/cancel', { idBase64: '***' }, 'idBase64: must be an id’s bytes in base64'],
      ['/api/jobs/a/cancel', { force: true }, 'force: is not a field of this request'],
      ['/api/jobs/a/reschedule', { delayMs: 'soon' }, 'delayMs: '],
      ['/api/jobs/a/reschedule', { runAt: 'tomorrow' }, 'runAt: '],
      ['/api/jobs/a/reschedule', {}, 'reschedule: give delayMs or runAt'],
      ['/api/jobs/a/reschedule', { delayMs: 5, at: 1 }, 'at: is not a field of this request'],
      ['/api/groups/pause', { group: 9 }, 'group: must be a group number from 0 to 1'],
      ['/api/groups/pause', { group: '1' }, 'group: must be a group number'],
      ['/api/groups/resume', { groups: [1] }, 'groups: is not a field of this request'],
      ['/api/schedules/nightly/remove', { now: true }, 'now: is not a field of this request'],
      ['/api/dead/retry', [1], 'body: must be a JSON object'],
    ];
    const wrong: string[] = [];
    for (const [path, body, expected] of cases) {
      const answer = await send(path, body);
      const error = answer.body.error ?? '';
      if (answer.status !== 400 || !error.startsWith(expected) || error.includes('\n'))
        wrong.push(`${body === undefined ? 'GET' : 'POST'} ${path}: ${answer.status} ${error}`);
    }
    expect(wrong).toEqual([]);
    // Nothing was changed by a refused request.
    expect((await queue.listCounts()).delayed).toBe(2);
  });

  it('still answers well-formed requests', async () => {
    for (const path of [
      '/api/overview?since=0',
      '/api/dead?group=1&limit=5&order=oldest',
      '/api/schedules',
      '/api/rate-limits',
      '/api/list?state=done&order=oldest&limit=5',
      `/api/list?state=delayed&cursor=${delayedCursor}`,
      `/api/jobs/a?group=${String((await queue.get('a'))?.group)}`,
      `/api/jobs/x?idBase64=${Buffer.from('b').toString('base64')}`,
    ]) {
      expect((await send(path, undefined)).status, path).toBe(200);
    }
    expect((await send('/api/jobs/nothing', undefined)).status).toBe(404);
    expect((await send('/api/jobs/b/reschedule', { delayMs: 120_000 })).body).toEqual({
      rescheduled: true,
    });
    const b = Buffer.from('b').toString('base64');
    expect((await send('/api/jobs/x/cancel', { idBase64: b })).body).toEqual({ cancelled: true });
    expect((await send('/api/dead/retry', { ids: [{ base64: b }] })).body).toEqual({ count: 0 });
  });
});
