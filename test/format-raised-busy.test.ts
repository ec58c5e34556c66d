/**
 * A newer skyq raises the data format while an actor holds a job: the actor's lease renewals,
 * its ack and its flow relay are refused as its claim is. Each actor still says so in one line
 * (format-newer), and that line stays its last error: before, the first renewal refused logged
 * 'lease renewal failed: a newer skyq …' as a line of its own and took the halt's place in
 * `skyq stats`' last error column (seen in a rolling upgrade from a format-8 launcher).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Queue, startActors } from '../src/index.js';
import { FORMAT_VERSION, formatKeys } from '../src/queue/format.js';
import { freshPrefix } from './helpers/queue.js';
import { fixture, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const GROUPS = 2;
const NEWER = FORMAT_VERSION + 1;
const HALT_LINE = `a newer skyq (format ${NEWER}) is running on this Redis; this launcher (format ${FORMAT_VERSION}) stops claiming`;

async function setFormat(prefix: string, format: number) {
  for (const key of formatKeys(prefix, GROUPS)) await redis.client.set(key, String(format));
}

/** The error lines (level 50) of an actor's log. */
function errorLines(logDir: string, group: number): string[] {
  const log = readFileSync(join(logDir, `actor-${group}.log`), 'utf8');
  return log.split('\n').filter((line) => line.includes('"level":50'));
}

describe('a newer format raised while actors hold jobs', () => {
  it('each actor logs the halt once, and keeps it as its last error', async () => {
    const prefix = freshPrefix('fmtbusy');
    const options = { redis: redis.server.url, prefix, groups: GROUPS };
    const logDir = tempDir();
    // Renewals every 300 ms: several are refused while the 4 s handlers run.
    const launcher = await startActors({
      ...options,
      logDir,
      leaseMs: 900,
      handler: fixture('record.mjs'),
      publishStats: false,
    });
    const producer = new Queue(options);
    try {
      for (let g = 0; g < GROUPS; g++)
        await producer.add({ list: 'fmtbusy', ms: 4000 }, { id: `held-${g}`, group: g });
      await waitFor('both jobs held', async () => {
        const stats = await launcher.stats();
        return stats.actors.every((a) => a.stat?.inFlight === 1) || undefined;
      });
      await setFormat(prefix, NEWER);
      await waitFor('both actors halted', async () => {
        const stats = await launcher.stats();
        return stats.actors.every((a) => a.stat?.state === 'halted') || undefined;
      });
      await sleep(1500); // more renewals, refused
      for (let g = 0; g < GROUPS; g++) {
        const lines = errorLines(logDir, g);
        expect(lines, `actor ${g}`).toHaveLength(1);
        expect(lines[0]).toContain('"format-newer"');
        expect(lines[0]).toContain(HALT_LINE);
      }
      const stats = await launcher.stats();
      expect(stats.actors.map((a) => a.stat?.lastError)).toEqual([HALT_LINE, HALT_LINE]);
    } finally {
      await setFormat(prefix, FORMAT_VERSION);
      await producer.close();
      await launcher.stop(0);
    }
  });
});
