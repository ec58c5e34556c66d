/**
 * One seed run of skyq with startActors' defaults, on a fresh private redis-server, as compare.js
 * runs it: the figures that compare.js judges, one line, to set beside another build's run.
 *   node dist/bench/seed-once.js [--count 100000] [--runs 1]
 */
import { parseArgs } from 'node:util';
import { startRedisServer } from '../src/redis/server.js';
import { runSkyq } from './skyq.js';
import { defaultWorkload } from './workloads.js';

const { values } = parseArgs({
  options: { count: { type: 'string', default: '100000' }, runs: { type: 'string', default: '1' } },
});
for (let run = 0; run < Number(values.runs); run++) {
  const server = await startRedisServer();
  try {
    const w = { ...defaultWorkload('seed'), count: Number(values.count) };
    const r = await runSkyq(server.url, w);
    console.log(
      [
        `adds/s ${Math.round(r.enqueueRate)}`,
        `late p99 ${Math.round(r.lateness.p99)} ms`,
        `since added p99 ${r.latenessSinceAdded.p99.toFixed(1)} ms`,
        `total ${r.totalSeconds.toFixed(2)} s`,
        `node cpu ${r.nodeCpuSeconds.toFixed(2)} s`,
        `redis cpu ${r.redisCpuSeconds.toFixed(2)} s`,
        `lost ${r.lost} dup ${r.duplicates} early ${r.early.count}`,
      ].join(' · '),
    );
  } finally {
    await server.stop();
  }
}
