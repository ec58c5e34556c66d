/**
 * Issue 18's scale-out figure: the seed (random due order, producer and actors in one process)
 * on a real Redis Cluster on loopback, with 1 master and with 3, and each master's Redis CPU per
 * message it served. The two cores cap the Node side, so the figure is how Redis's per-message
 * cost divides over masters, not the throughput.
 *   npm run build && node dist/bench/cluster-scale.js [--count 100000] [--masters 1,3] [--runs 1]
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { keyOf } from '../src/base/keys.js';
import { startRedisCluster } from '../src/redis/server.js';
import { runSkyq } from './skyq.js';
import { defaultWorkload } from './workloads.js';

const GROUPS = 10;
const PREFIX = 'task_group';

type Node = { host: string; port: number };

/** Which master (index into `nodes`) serves each group's keys: its slot, then CLUSTER SLOTS. */
async function groupsByMaster(nodes: Node[]): Promise<number[]> {
  const client = new Redis(nodes[0] as Node);
  try {
    const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const owners: number[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const slot = Number(await client.call('CLUSTER', 'KEYSLOT', keyOf(PREFIX, g, 'delayed')));
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      const port = range?.[2][1];
      owners.push(nodes.findIndex((n) => n.port === port));
    }
    return owners;
  } finally {
    client.disconnect();
  }
}

/**
 * A lone master never met a peer, so it does not know its own address and CLUSTER SLOTS names
 * it "": clients could not follow. Telling each node its loopback address fixes that.
 */
async function announceLoopback(nodes: Node[]): Promise<void> {
  for (const node of nodes) {
    const client = new Redis(node);
    try {
      await client.config('SET', 'cluster-announce-ip', node.host);
    } finally {
      client.disconnect();
    }
  }
}

async function measure(masters: number, count: number) {
  const cluster = await startRedisCluster({ masters });
  try {
    await announceLoopback(cluster.nodes);
    const owners = await groupsByMaster(cluster.nodes);
    const w = { ...defaultWorkload('seed'), count };
    const r = await runSkyq({ cluster: cluster.nodes }, w);
    const byServer = r.redisCpuSecondsByServer ?? [];
    // addBulk spreads messages evenly over the groups, so a master serves its groups' share.
    const perMaster = byServer.map((cpu, i) => {
      const groups = owners.filter((o) => o === i).length;
      const messages = (r.messages * groups) / GROUPS;
      return { groups, messages, cpuSeconds: cpu, usPerMessage: (cpu * 1e6) / messages };
    });
    return { masters, result: r, perMaster };
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '100000' },
      masters: { type: 'string', default: '1,3' },
      runs: { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
    },
  });
  const count = Number(values.count);
  const shapes = values.masters.split(',').map(Number);
  const runs = [];
  for (let run = 0; run < Number(values.runs); run++) {
    for (const masters of shapes) runs.push(await measure(masters, count));
  }
  if (values.json) {
    console.log(JSON.stringify(runs, null, 2));
    return;
  }
  console.log(
    `seed, ${count.toLocaleString('en-US')} messages, random due order, ${GROUPS} groups`,
  );
  for (const { masters, result: r, perMaster } of runs) {
    const total = (r.redisCpuSeconds * 1e6) / r.messages;
    console.log(
      `\n${masters} master(s): adds/s ${Math.round(r.enqueueRate)}, first add → last handled ` +
        `${r.totalSeconds.toFixed(2)} s, lateness p99 ${r.lateness.p99.toFixed(0)} ms ` +
        `(from max(due, added) ${r.latenessSinceAdded.p99.toFixed(1)} ms), lost ${r.lost}, ` +
        `duplicates ${r.duplicates}, early ${r.early.count}`,
    );
    console.log(
      `  Redis CPU, all masters: ${r.redisCpuSeconds.toFixed(2)} s, ${total.toFixed(1)} µs/msg`,
    );
    perMaster.forEach((m, i) => {
      const share = ((100 * m.cpuSeconds) / (r.redisCpuSeconds || 1)).toFixed(0);
      console.log(
        `  master ${i}: ${m.groups} groups, ${m.cpuSeconds.toFixed(2)} CPU-s (${share} %), ` +
          `${m.usPerMessage.toFixed(1)} µs per message it served`,
      );
    });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
