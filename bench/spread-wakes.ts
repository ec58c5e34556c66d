/**
 * What it costs to start 2,000 messages a second on timers when the starts are spread over T
 * threads, as the steady workload spreads them over ten actors: each thread waits with one
 * timer for its next due time and, when it fires, starts every item due by then (as
 * start-timer.ts does), doing a token amount of work for each. No Redis and no skyq code: this
 * is the floor that waking T threads puts under "launcher CPU per message".
 *
 * Prints the process's CPU per message (every thread, process.cpuUsage) and the lateness.
 *   node dist/bench/spread-wakes.js [--threads 1,2,10] [--rate 2000] [--seconds 10] [--grid 0]
 * --grid G rounds each timer up to a multiple of G ms of the wall clock, so that the threads
 * wake at the same instants (a test of whether shared wake-ups are cheaper).
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface Plan {
  start: number;
  seconds: number;
  perThreadRate: number;
  grid: number;
}

/** One thread's part: Poisson due times at its rate; returns its lateness figures (ms). */
function runThread({ start, seconds, perThreadRate, grid }: Plan): void {
  const end = start + seconds * 1000;
  const dues: number[] = [];
  for (let at = start; ; ) {
    at += (-Math.log(1 - Math.random()) * 1000) / perThreadRate;
    if (at >= end) break;
    dues.push(at);
  }
  const now = () => performance.timeOrigin + performance.now();
  const late = new Float64Array(dues.length);
  let next = 0;
  let sink = 0;
  const arm = (): void => {
    if (next >= dues.length) {
      parentPort?.postMessage({ late, sink });
      return;
    }
    const due = dues[next] as number;
    const at = grid > 0 ? Math.ceil(due / grid) * grid : due;
    setTimeout(fire, Math.max(1, Math.ceil(at - now())));
  };
  const fire = (): void => {
    const t = now();
    while (next < dues.length && (dues[next] as number) <= t) {
      late[next] = t - (dues[next] as number);
      for (let k = 0; k < 2000; k++) sink += k; // a token start
      next++;
    }
    arm();
  };
  arm();
}

async function measure(threads: number, rate: number, seconds: number, grid: number) {
  // Counted from the first due time: the threads' own start-up (an isolate each) is left out.
  const plan: Plan = { start: Date.now() + 1500, seconds, perThreadRate: rate / threads, grid };
  let before = process.cpuUsage();
  const counting = setTimeout(() => {
    before = process.cpuUsage();
  }, plan.start - Date.now());
  const workers = Array.from(
    { length: threads },
    () => new Worker(new URL(import.meta.url), { workerData: plan }),
  );
  const parts = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<Float64Array>((resolve, reject) => {
          worker.once('message', (message: { late: Float64Array }) => resolve(message.late));
          worker.once('error', reject);
        }),
    ),
  );
  const used = process.cpuUsage(before);
  clearTimeout(counting);
  await Promise.all(workers.map((worker) => worker.terminate()));
  const late = parts.flatMap((part) => Array.from(part)).sort((a, b) => a - b);
  const at = (q: number) => late[Math.min(late.length - 1, Math.floor(late.length * q))] ?? 0;
  return {
    messages: late.length,
    cpuUsPerMessage: (used.user + used.system) / late.length,
    p50: at(0.5),
    p99: at(0.99),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string', default: '1,2,10' },
      rate: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '10' },
      grid: { type: 'string', default: '0' },
    },
  });
  const [rate, seconds, grid] = [values.rate, values.seconds, values.grid].map(Number);
  if (!(rate && rate > 0) || !(seconds && seconds > 0) || !(grid !== undefined && grid >= 0)) {
    throw new Error('--rate and --seconds take positive numbers, --grid 0 or more');
  }
  console.log(`load average at the start: ${loadavg()[0]?.toFixed(2)}`);
  for (const threads of values.threads.split(',').map(Number)) {
    if (!(threads >= 1)) throw new Error('--threads takes counts of 1 or more');
    const r = await measure(threads, rate, seconds, grid);
    console.log(
      `${threads} thread(s), ${r.messages} starts: ${r.cpuUsPerMessage.toFixed(1)} µs of CPU a start, ` +
        `lateness p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`,
    );
  }
  console.log(`load average at the end: ${loadavg()[0]?.toFixed(2)}`);
}

if (isMainThread) {
  if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
    await main().catch((error: Error) => {
      console.error(`spread-wakes: ${error.message}`);
      process.exitCode = 2;
    });
  }
} else {
  runThread(workerData as Plan);
}
