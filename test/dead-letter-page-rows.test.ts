// A dead-letter page over several groups reads the rows it shows and no others (issue 24, 2.9):
// a page of 5 over 3 groups of 512 KiB letters moved 15 whole bodies (7.5 MiB) from Redis for 5
// rows. Bytes Redis sent (INFO stats total_net_output_bytes) for whole bodies and for previews;
// the rows are the newest (or the oldest) over all groups, and pages by cursor still see each
// letter once, also when letters leave between pages. Real redis-server.
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetter, Queue } from '../src/index.js';
import { useQueueRedis } from './helpers/queue.js';

const redis = useQueueRedis();
const GROUPS = 3;
const PER_GROUP = 5;
const SPILLED = 512 * 1024;
const IN_HASH = 60_000;
let spilled: Queue;
let inHash: Queue;

const bodyOf = (i: number, bytes: number) =>
  `${String(i).padStart(3, '0')}:${'d'.repeat(bytes - 4)}`;

/** Letters die one group after another, in the order of i: the oldest 5 span every group. */
async function letters(q: Queue, bytes: number): Promise<void> {
  for (let i = 0; i < GROUPS * PER_GROUP; i++) {
    const group = i % GROUPS;
    await q.add(bodyOf(i, bytes), { group });
    const [m] = await q.claim(group, 1);
    if (!m) throw new Error('nothing claimed');
    await q.fail(m, `died ${i}`);
  }
}

/** Bytes Redis sent while `work` ran. */
async function bytesOut(client: Redis, work: () => Promise<unknown>): Promise<number> {
  const read = async () =>
    Number(/total_net_output_bytes:(\d+)/.exec(await client.info('stats'))?.[1]);
  const before = await read();
  await work();
  return (await read()) - before;
}

const bodies = (page: DeadLetter[]) => page.map((l) => String(l.body).slice(0, 3));

beforeAll(async () => {
  spilled = await redis.queue({ groups: GROUPS, attempts: 1 });
  inHash = await redis.queue({ groups: GROUPS, attempts: 1 });
  await letters(spilled, SPILLED);
  await letters(inHash, IN_HASH);
}, 60_000);

describe('a page of dead letters over several groups', () => {
  it('with whole bodies moves the bodies of the rows it shows, no more', async () => {
    let page: DeadLetter[] = [];
    const moved = await bytesOut(redis.plain, async () => {
      page = (await spilled.deadLetters.page({ limit: 5 })).letters;
    });
    console.log(`page of 5 over ${GROUPS} groups of 512 KiB letters moved ${moved} bytes`);
    // Newest first by default (issue 27, 2.3).
    expect(bodies(page)).toEqual(['014', '013', '012', '011', '010']);
    expect(page.every((l) => String(l.body).length === SPILLED)).toBe(true);
    expect(moved).toBeLessThan(5 * SPILLED + 64 * 1024);
  });

  it('with previews moves previews of the rows it shows, no more', async () => {
    for (const q of [spilled, inHash]) {
      let page: DeadLetter[] = [];
      const moved = await bytesOut(redis.plain, async () => {
        page = (await q.deadLetters.page({ limit: 5, previewBytes: 300, order: 'oldest' })).letters;
      });
      console.log(`page of 5 previews over ${GROUPS} groups moved ${moved} bytes`);
      expect(bodies(page)).toEqual(['000', '001', '002', '003', '004']);
      expect(page.every((l) => l.truncated && String(l.body).length === 300)).toBe(true);
      expect(moved).toBeLessThan(5 * 300 + 3000);
    }
  });

  it('pages by cursor see each letter once, also when one leaves between pages', async () => {
    const q = await redis.queue({ groups: GROUPS, attempts: 1 });
    await letters(q, 100);
    const all = (await q.deadLetters.page({ limit: 100 })).letters;
    const leaving = all.find((l) => String(l.body).startsWith('007')) as DeadLetter;
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await q.deadLetters.page({
        limit: 4,
        previewBytes: 10,
        ...(after ? { after } : {}),
      });
      seen.push(...bodies(page.letters));
      if (pages === 0) expect(await q.deadLetters.purge({ ids: [leaving.id] })).toBe(1);
      after = page.next ?? undefined;
      pages += 1;
    } while (after && pages < 20);
    expect(seen).toEqual(bodies(all).filter((body) => body !== '007'));
  });
});
