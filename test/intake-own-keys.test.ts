/**
 * An intake never takes skyq's own keys as its source: moving them out would drain the queue
 * (a dead set handed on as new messages loses its dead letters and orphans their reasons). Every
 * key docs/keys.md lists for the prefix is refused, by `intake` and `zsetIntake` alike, before
 * anything starts; other programs' keys, even named after the prefix, are not.
 */
import { describe, expect, it } from 'vitest';
import { planStart } from '../src/runtime/start-options.js';
import { startActors } from '../src/start.js';
import { tempDir, useRuntimeRedis } from './helpers/runtime.js';

const redis = useRuntimeRedis();

/** skyq's own keys for prefix `oi`: the groups' sets, and what lives beside them. */
const GROUP_SETS = ['oi:0', 'oi:1'];
const OWN_KEYS = [
  '{oi:0}:dead',
  '{oi:1}:ready',
  '{oi:0}:log:some-id',
  '{oi:0}:body:nonce',
  '{oi:rate}:index',
  '{oi:rate}:b:*',
  '{oi:intake}:alive',
  '{oi:intake}:format',
  'oi:launchers',
  'oi:launcher:abc',
  'oi:format',
  '{high}:oi:intake:launcher-1',
  '{high}:oi:intake:launcher-1:taken',
  '{seta}:oi:intake:launcher-1:z0',
];
/** Not skyq's: another prefix's, or named after this one without being one of its keys. */
const OTHERS = ['high', 'oi', 'oi:inbox', 'oi:launchersx', 'oi0:1', '{oi}:x', '{other:0}:dead'];

const where = { prefix: 'oi', groups: 2, logDir: tempDir(), publishStats: false };

/** What startActors says of these options (a launcher it did start is stopped). */
async function refusalOf(options: Parameters<typeof startActors>[0]): Promise<string> {
  return startActors({ redis: redis.server.url, ...where, ...options }).then(
    async (launcher) => {
      await launcher.stop();
      return 'started';
    },
    (error: Error) => error.message,
  );
}

describe("an intake of skyq's own keys", () => {
  it('is refused in one line naming the option and the key, and the key is left as it was', async () => {
    await redis.client.zadd('{oi:0}:dead', 1, 'a dead letter');
    for (const key of [...GROUP_SETS, ...OWN_KEYS]) {
      const kind = GROUP_SETS.includes(key) ? 'groups' : 'keys';
      const own = `is one of skyq's own ${kind}`;
      const zset = await refusalOf({ zsetIntake: [{ key, scoreUnit: 'ms' }] });
      expect(zset).toMatch(`zsetIntake[0].key: ${own}`);
      expect(zset).toMatch(` (got ${JSON.stringify(key)})`);
      const list = await refusalOf({ intake: ['high', key] });
      expect(list).toMatch(`intake[1].list: ${own}`);
      expect(list).toMatch(` (got ${JSON.stringify(key)})`);
      expect(list).not.toMatch('\n');
    }
    expect(await redis.client.zrange('{oi:0}:dead', 0, -1)).toEqual(['a dead letter']);
  });

  it('takes other keys, whatever the prefix', () => {
    for (const key of OTHERS) {
      const plan = planStart({
        ...where,
        intake: [key],
        zsetIntake: [{ key: `z${key}`, scoreUnit: 's' }],
      });
      expect(plan.intake.map((spec) => spec.list)).toEqual([key]);
    }
    // A prefix's own characters are taken literally: "a.b" owns a.b:0, not aXb:0.
    const dotted = { ...where, prefix: 'a.b' };
    expect(planStart({ ...dotted, intake: ['aXb:0', 'aXb:launchers'] }).intake).toHaveLength(2);
    expect(() => planStart({ ...dotted, intake: ['a.b:launchers'] })).toThrow(/own keys/);
  });
});
