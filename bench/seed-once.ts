/**
 * One seed run of skyq with startActors' defaults, on a fresh private redis-server, as compare.js
 * runs it: the figures that compare.js judges, one line, to set beside another build's run.
 *   node dist/bench/seed-once.js [--count 100000] [--runs 1] [--workload steady]
 * `--workload steady` runs compare.js's steady row instead (2,000 a second for 30 s) and adds
 * its judged figure, Node CPU per message with start-up left out.
 */
import { parseArgs } from 'node:util';
import { startRedisServer } from '../src/redis/server.js';
import { runSkyq } from './skyq.js';
import { defaultWorkload, WORKLOAD_NAMES, type WorkloadName } from './workloads.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string' },
    runs: { type: 'string', default: '1' },
    workload: { type: 'string', default: 'seed' },
  },
});
const name = values.workload as WorkloadName;
if (!WORKLOAD_NAMES.includes(name))
  throw new Error(`--workload: one of ${WORKLOAD_NAMES.join(', ')}`);
const base = defaultWorkload(name);
for (let run = 0; run < Number(values.runs); run++) {
  const server = await startRedisServer();
  try {
    const w = values.count === undefined ? base : { ...base, count: Number(values.count) };
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
        `node µs/msg ${((r.nodeCpuSeconds * 1e6) / r.messages).toFixed(0)}`,
      ].join(' · '),
    );
  } finally {
    await server.stop();
  }
}
