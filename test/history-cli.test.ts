// The CLI's side of history: `skyq get` prints a kept job's finish, duration and result, and
// `skyq start --keep-done` refuses a bad value in one line before starting anything.
import { describe, expect, it } from 'vitest';
import { Queue } from '../src/index.js';
import { runCli, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

describe('skyq and history', () => {
  it('get prints state done, when it finished, how long it ran and its result', async () => {
    const queue = new Queue({ redis: redis.server.url, prefix: 'hcli', groups: 1 });
    try {
      const id = await queue.add({ order: 7 }, { id: 'order:7' });
      const [m] = await queue.claim(0, 1);
      if (!m) throw new Error('nothing claimed');
      m.result = { refunded: true };
      m.durationMs = 42;
      await queue.ack([m]);
      const out = await runCli([
        'get',
        id,
        '--redis',
        redis.server.url,
        '--prefix',
        'hcli',
        '--groups',
        '1',
      ]);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/state\s+done/);
      expect(out.stdout).toMatch(/duration\s+42 ms/);
      expect(out.stdout).toMatch(/result\s+\{"refunded":true\}/);
      expect(out.stdout).toMatch(/finished\s+\S/);
    } finally {
      await queue.close();
    }
  });

  it('start --keep-done refuses a bad value in one line', async () => {
    const out = await runCli(['start', '--keep-done', 'lots', '--redis', redis.server.url]);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')[0]).toBe(
      'skyq: keep-done: must be <count>[,<age>], like 1000,1h (got "lots")',
    );
  });
});
