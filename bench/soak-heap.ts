/**
 * Heap soak (issue 7 item 6): 1,000,000 messages through a launcher with `timeoutMs` set (the
 * path that leaked with AbortSignal.any per message), sampling every actor's heap as it goes.
 * Prints start, peak and end heap per actor; the target is flat within ±10 MB of the start.
 *   node --expose-gc dist/bench/soak-heap.js [--messages 1000000] [--timeout-ms 30000]
 * With --expose-gc, each sample follows a full collection in every actor (floors, not noise).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BroadcastChannel } from 'node:worker_threads';
import { type Launcher, Queue } from '../src/index.js';
import { startRedisServer } from '../src/redis/server.js';
import { SOAK_GC_CHANNEL } from './soak-handler.js';
import { tempLogDir, timedStart } from './start-cost.js';
import { makeBody } from './workloads.js';

const MB = 1024 * 1024;
const TARGET_MB = 10;
const CHUNK = 1_000;
const SOAK_HANDLER = new URL('./soak-handler.js', import.meta.url).href;

export interface Sample {
  seconds: number;
  handled: number;
  /** heap used per actor, in the launcher's group order, bytes */
  heap: number[];
}

/** The one place the soak reads an actor's heap (the debug protocol's `mem`). */
async function actorHeap(launcher: Launcher, group: number): Promise<number> {
  const mem = (await launcher.debug(group, 'mem', 5_000)) as { heapUsed: number };
  return mem.heapUsed;
}

async function sample(launcher: Launcher, gc: BroadcastChannel | null): Promise<number[]> {
  if (gc) {
    gc.postMessage('gc');
    await sleep(200);
  }
  return Promise.all(launcher.groups.map((g) => actorHeap(launcher, g)));
}

async function pending(queue: Queue): Promise<number> {
  return (await queue.counts()).reduce((sum, c) => sum + c.delayed + c.ready + c.active, 0);
}

export async function soak(options: {
  messages: number;
  timeoutMs: number;
  sampleMs: number;
  maxPending: number;
  log: (line: string) => void;
}): Promise<{ groups: number[]; samples: Sample[] }> {
  const server = await startRedisServer();
  const logs = tempLogDir();
  const queue = new Queue({ redis: server.url });
  const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  const gc = exposed ? new BroadcastChannel(SOAK_GC_CHANNEL) : null;
  let launcher: Launcher | undefined;
  try {
    ({ launcher } = await timedStart({
      redis: server.url,
      handler: SOAK_HANDLER,
      logDir: logs.dir,
      timeoutMs: options.timeoutMs,
    }));
    const samples: Sample[] = [];
    const started = performance.now();
    const record = async (handled: number) => {
      const heap = await sample(launcher as Launcher, gc);
      const seconds = (performance.now() - started) / 1000;
      samples.push({ seconds, handled, heap });
      const mbs = heap.map((h) => (h / MB).toFixed(1)).join(' ');
      options.log(`${seconds.toFixed(0)} s, ${handled} handled, heap MB per actor: ${mbs}`);
    };
    await record(0);
    const body = makeBody(100);
    let added = 0;
    let nextSample = performance.now() + options.sampleMs;
    for (;;) {
      const waiting = await pending(queue);
      const handled = added - waiting;
      if (performance.now() >= nextSample) {
        await record(handled);
        nextSample = performance.now() + options.sampleMs;
      }
      if (handled >= options.messages) break;
      // Keep the queue fed but bounded: the soak is about the actors, not Redis memory.
      if (added < options.messages && waiting < options.maxPending) {
        const n = Math.min(CHUNK, options.messages - added);
        await queue.addBulk(Array.from({ length: n }, () => ({ body })));
        added += n;
      } else {
        await sleep(20);
      }
    }
    await record(options.messages);
    return { groups: launcher.groups, samples };
  } finally {
    gc?.close();
    await launcher?.stop(1000);
    await queue.close();
    await server.stop();
    logs.remove();
  }
}

export function heapSummary(groups: number[], samples: Sample[]) {
  const first = samples[0] as Sample;
  const last = samples[samples.length - 1] as Sample;
  return first.heap.map((start, i) => {
    const all = samples.map((s) => s.heap[i] as number);
    const [low, peak] = [Math.min(...all), Math.max(...all)];
    const flat = peak - start <= TARGET_MB * MB && start - low <= TARGET_MB * MB;
    return {
      group: groups[i] as number,
      startMB: start / MB,
      peakMB: peak / MB,
      endMB: (last.heap[i] as number) / MB,
      flat,
    };
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      messages: { type: 'string', default: '1000000' },
      'timeout-ms': { type: 'string', default: '30000' },
      'sample-seconds': { type: 'string', default: '5' },
      'max-pending': { type: 'string', default: '50000' },
      json: { type: 'boolean', default: false },
    },
  });
  const num = (name: string, v: string) => {
    const n = Number(v.replace(/_/g, ''));
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a whole number > 0`);
    return n;
  };
  const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (!exposed) log('without --expose-gc: samples include garbage not yet collected');
  const { groups, samples } = await soak({
    messages: num('messages', values.messages),
    timeoutMs: num('timeout-ms', values['timeout-ms']),
    sampleMs: num('sample-seconds', values['sample-seconds']) * 1000,
    maxPending: num('max-pending', values['max-pending']),
    log,
  });
  const summary = heapSummary(groups, samples);
  if (values.json) {
    console.log(JSON.stringify({ gcBeforeSamples: exposed, summary, samples }, null, 2));
    return;
  }
  console.log(`group  start MB  peak MB  end MB  flat within ±${TARGET_MB} MB`);
  for (const a of summary) {
    const mb = (v: number) => v.toFixed(1).padStart(7);
    console.log(
      `${String(a.group).padStart(5)}  ${mb(a.startMB)}  ${mb(a.peakMB)} ${mb(a.endMB)}  ${a.flat ? 'met' : 'missed'}`,
    );
  }
  const met = summary.filter((a) => a.flat).length;
  console.log(
    `${met} of ${summary.length} actors flat; command: node ${process.execArgv.join(' ')} dist/bench/soak-heap.js ${process.argv.slice(2).join(' ')}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main()
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    })
    .finally(() => setTimeout(() => process.exit(), 5_000).unref());
}
